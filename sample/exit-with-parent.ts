/**
 * A sample process started by the demo ends when the demo does: its stdin (a pipe from the demo)
 * closes then, even if the demo was killed before it could stop its children.
 */
export function exitWithParent(app: { close(): Promise<void> }): void {
  process.stdin.on('end', () => void app.close().finally(() => process.exit(0)));
  process.stdin.resume();
}
