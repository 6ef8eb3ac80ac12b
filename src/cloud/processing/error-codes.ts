// The cloud spec's table of processing error codes ("Errors"): what each means and what to do
// about it, in words, for the processing-failed e-mail (notifications/cloud-mail.ts). The
// project's own error_reason says what happened in this run; this says what the code stands for.

export interface ErrorCodeMeaning {
  meaning: string;
  /** The spec's mitigation; absent where it gives none. */
  mitigation?: string;
}

const ERROR_CODES: Record<number, ErrorCodeMeaning> = {
  10001: { meaning: 'Unexpected error' },
  10002: { meaning: 'Processing exceeded allotted time' },
  10003: { meaning: 'Processing exceeded available resources' },
  10101: { meaning: 'Camera creation failed; see the processing log', mitigation: 'Read the processing log' },
  10201: { meaning: 'Too few cameras calibrated', mitigation: 'Check image quality and overlap' },
  10402: { meaning: 'Point cloud generation failed', mitigation: 'Check image quality and overlap' },
  10410: { meaning: 'Processing failed' },
  10411: { meaning: 'Densification of the sparse point cloud failed', mitigation: 'Check calibration quality' },
  10501: { meaning: '3D textured mesh generation failed', mitigation: 'Ensure the dense point cloud is a single block' },
  10601: { meaning: 'Input data not valid' },
  10611: { meaning: 'Output CRS is not isometric', mitigation: 'Use a valid isometric CRS' },
  10612: { meaning: 'Output CRS is not projected or arbitrary', mitigation: 'Use a projected or arbitrary CRS' },
  10613: { meaning: 'Output CRS has no horizontal component', mitigation: 'Use a CRS with a horizontal component' },
  10614: { meaning: 'Geoid model or geoid height given without a vertical CRS component', mitigation: 'Remove it or add a vertical component' },
  10615: { meaning: 'Geoid height given together with a geoid model', mitigation: 'Remove one of them' },
};

/** The meaning of a processing error code; an unknown one reads as the spec's 10001. */
export function errorCodeMeaning(code: number | null): ErrorCodeMeaning {
  return (code !== null && ERROR_CODES[code]) || ERROR_CODES[10001];
}
