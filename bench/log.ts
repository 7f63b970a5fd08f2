/** The bench's progress line: stderr, so a report written to stdout stays clean. */
export const log = (line: string): void => void process.stderr.write(`${line}\n`);
