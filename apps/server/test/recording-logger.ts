/** A logger that keeps warnings, so tests can check that a failure was reported and not thrown. */
export function recordingLogger(): { warn(obj: object, msg: string): void; warnings: { obj: object; msg: string }[] } {
  const warnings: { obj: object; msg: string }[] = [];
  return { warnings, warn: (obj, msg) => void warnings.push({ obj, msg }) };
}
