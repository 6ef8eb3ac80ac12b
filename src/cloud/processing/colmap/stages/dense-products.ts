// What a dense stage after the fusion hands back: the outputs it stored, and the ones it could not
// make for this dataset with the reason in words (an orthophoto from photos that look at the
// horizon, a DSM in an arbitrary system). Shared by meshing.ts, elevation.ts and orthophoto.ts.
import fs from 'node:fs';
import type { EngineInput, OutputType, ProducedOutput } from '../../engine.ts';

export interface DenseProducts {
  readonly outputs: readonly ProducedOutput[];
  readonly leftOut: readonly { outputType: OutputType; reason: string }[];
}

/** Stores a file of the work folder as an output under the run's output prefix. */
export async function putFile(input: EngineInput, outputType: OutputType, file: string, name: string, contentType: string): Promise<ProducedOutput> {
  const key = `${input.outputPrefix}${name}`;
  await input.store.putObject(input.bucket, key, fs.createReadStream(file), { contentType });
  return { outputType, key };
}
