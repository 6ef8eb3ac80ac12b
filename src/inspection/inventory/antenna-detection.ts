// `detect_antennas` (spec allowance rule 3): this installation has no automatic antenna detector.
// Rather than spending a Tower inventory unit for a detection that never runs, the option is
// refused where a client sets it (creation, update, retry: 400 on
// `processing_parameters.detect_antennas`), and an inspection that carries it from before this
// rule is processed without spending the unit, its inventory status set to 7 ("ERROR - Inventory
// automatic detection") with the reason beside it (`additional_statuses.inventory_reason`).
// docs/inspection-service.md, "Inventory: automatic antenna detection".
import { ValidationError } from '../../infra/http/errors.ts';

export const ANTENNA_DETECTION_UNAVAILABLE = 'automatic antenna detection is not available on this installation';

/** Additional status 7 of the spec's list: "ERROR - Inventory automatic detection". */
export const INVENTORY_DETECTION_ERROR = 7;

/** A 400 naming `processing_parameters.detect_antennas` when the parameters ask for detection. */
export function refuseAntennaDetection(parameters: { detect_antennas?: boolean } | null | undefined): void {
  if (parameters?.detect_antennas === true) {
    throw new ValidationError({
      processing_parameters: { detect_antennas: [`${ANTENNA_DETECTION_UNAVAILABLE[0].toUpperCase()}${ANTENNA_DETECTION_UNAVAILABLE.slice(1)}: set it to false or leave it out. No Tower inventory unit is spent.`] },
    });
  }
}

/** The additional statuses of an inspection that asked for detection from before the rule. */
export function inventoryUnavailableStatuses<T extends object>(current: T): T & { inventory: number; inventory_reason: string } {
  return { ...current, inventory: INVENTORY_DETECTION_ERROR, inventory_reason: `Antenna detection was asked for, but ${ANTENNA_DETECTION_UNAVAILABLE}; no Tower inventory unit was spent.` };
}
