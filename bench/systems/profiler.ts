import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

let session: Session | undefined;

/** Starts V8's sampling CPU profiler in this process (the runner's `--cpu-prof`, per measured run). */
export async function startProfile(): Promise<void> {
  if (!session) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
  }
  await session.post('Profiler.start');
}

/** Stops the profiler and writes the profile (`.cpuprofile`, as `node --cpu-prof` would). */
export async function stopProfile(file: string): Promise<void> {
  if (!session) throw new Error('no profile was started');
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
}
