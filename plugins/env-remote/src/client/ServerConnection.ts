import { retrying } from '@drmas/core';
import * as grpc from '@grpc/grpc-js';
import { environmentClient, MAX_MESSAGE_BYTES, type EnvironmentMethods, type MethodName } from '../protocol/environmentProtocol.js';

/** How calls to one server are made: a deadline per attempt, and retries of transient failures with backoff. */
export interface CallPolicy {
  deadlineMs: number;
  /** Further attempts after the first, for UNAVAILABLE and DEADLINE_EXCEEDED only. */
  retries: number;
  /** Wait before the first retry; doubled before each next one, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

/** Counts over a client's calls, for the run's metrics and for tests. */
export interface CallCounts {
  calls: number;
  retries: number;
  /** Calls that failed after their last attempt. */
  failures: number;
}

/** Only these may be transient; every other status is an answer, and asking again would get it again. */
const RETRIED = new Set<grpc.status>([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

/** A call that failed for good: the server, the method, the status and how many attempts were made. */
export class RemoteCallError extends Error {
  constructor(
    readonly url: string,
    readonly method: MethodName,
    readonly code: grpc.status,
    readonly attempts: number,
    detail: string,
  ) {
    super(`server ${url}: ${method} failed with ${grpc.status[code]} after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${detail}`);
  }

  get codeName(): string {
    return grpc.status[this.code];
  }
}

/** One gRPC channel to one `drmas serve`, with the call policy. */
export class ServerConnection {
  private readonly client: grpc.Client;

  constructor(
    readonly url: string,
    private readonly policy: CallPolicy,
    private readonly counts: CallCounts,
  ) {
    const Client = environmentClient();
    // grpc-js's own retries are off: attempts are counted (and bounded) here alone.
    this.client = new Client(url, grpc.credentials.createInsecure(), {
      'grpc.enable_retries': 0,
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    });
  }

  /** Calls `method`, retrying UNAVAILABLE and DEADLINE_EXCEEDED up to `policy.retries` times; else RemoteCallError. */
  async call<M extends MethodName>(
    method: M,
    request: EnvironmentMethods[M][0],
    policy: Partial<CallPolicy> = {},
  ): Promise<EnvironmentMethods[M][1]> {
    const { deadlineMs, retries, backoffMs, maxBackoffMs } = { ...this.policy, ...policy };
    this.counts.calls++;
    let last: grpc.ServiceError | undefined;
    const result = await retrying<EnvironmentMethods[M][1]>(
      { retries, delayMs: backoffMs, maxDelayMs: maxBackoffMs },
      async (tryNumber) => {
        try {
          return { value: await this.attempt(method, request, deadlineMs) };
        } catch (error) {
          last = error as grpc.ServiceError;
          if (RETRIED.has(last.code)) return { retry: last.details || last.message };
          this.counts.failures++;
          throw new RemoteCallError(this.url, method, last.code, tryNumber, last.details || last.message);
        }
      },
      (failed) => {
        if (failed.willRetry) this.counts.retries++;
      },
    );
    if ('value' in result) return result.value;
    this.counts.failures++;
    throw new RemoteCallError(this.url, method, last!.code, result.exhausted.tries, last!.details || last!.message);
  }

  close(): void {
    this.client.close();
  }

  private attempt<M extends MethodName>(
    method: M,
    request: EnvironmentMethods[M][0],
    deadlineMs: number,
  ): Promise<EnvironmentMethods[M][1]> {
    return new Promise((resolve, reject) => {
      const unary = (this.client as unknown as Record<string, grpc.requestCallback<unknown> & ((...args: unknown[]) => void)>)[method]!;
      unary.call(this.client, request, { deadline: Date.now() + deadlineMs }, (error: grpc.ServiceError | null, reply: unknown) =>
        error ? reject(error) : resolve(reply as EnvironmentMethods[M][1]),
      );
    });
  }
}
