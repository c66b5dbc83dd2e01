/** Why `signal` aborted, as an Error (the executor aborts with an `EpisodeFailure`; others may abort with anything). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}
