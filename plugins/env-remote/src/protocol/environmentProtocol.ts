import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/** The service definition's file, shipped with the package (`proto/drmas_env.proto`, documented field by field). */
export const PROTO_FILE = fileURLToPath(new URL('../../proto/drmas_env.proto', import.meta.url));

/** The fully qualified service name, as it appears in a call's path (`/drmas.env.v1.EnvironmentService/Step`). */
export const SERVICE_NAME = 'drmas.env.v1.EnvironmentService';

/**
 * The largest message either side accepts (gRPC's default is 4 MB): a step of many episodes whose observations hold
 * retrieved documents can exceed it.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Messages as proto-loader hands them over with these options: camelCase fields, 64-bit integers as numbers. */
const LOAD_OPTIONS = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true } as const;

export interface TaskMessage {
  id: string;
  dataSource: string;
  taskJson: string;
  observation: string;
  variables: Record<string, string>;
}

export interface EnvironmentSpecMessage {
  name: string;
  plugin: string;
  maxSteps: number;
  testSize: number;
}

export interface EpisodeStateMessage {
  sessionId: string;
  error: string;
  errorCode: string;
  observation: string;
  variables: Record<string, string>;
  done: boolean;
  outcome: number;
  stepScore?: number;
  metrics: Record<string, number>;
  stepsTaken: number;
}

export interface ActionMessage {
  type: string;
  content: string;
  agentId: string;
  turnIndex?: number;
}

export interface SessionOpenMessage {
  sessionId: string;
  ref?: { split: string; index: number };
  taskJson?: string;
  /** Which of `ref` and `taskJson` is set (proto-loader's `oneofs`). */
  task?: 'ref' | 'taskJson';
}

export interface SessionActionMessage {
  sessionId: string;
  stepIndex: number;
  action: ActionMessage;
}

export interface HealthReplyMessage {
  status: string;
  environments: string[];
  openSessions: number;
  sessionsCreated: number;
  sessionsExpired: number;
  calls: Record<string, number>;
  idleTimeoutMs: number;
}

/** Each method's request and reply. */
export interface EnvironmentMethods {
  Health: [Record<string, never>, HealthReplyMessage];
  ListEnvironments: [Record<string, never>, { environments: EnvironmentSpecMessage[] }];
  GetTasks: [{ environment: string; split: string; cursor: number; count: number }, { tasks: TaskMessage[]; nextCursor: number }];
  CreateSessions: [{ environment: string; sessions: SessionOpenMessage[] }, { states: EpisodeStateMessage[] }];
  Step: [{ environment: string; actions: SessionActionMessage[] }, { states: EpisodeStateMessage[] }];
  CloseSessions: [{ sessionIds: string[] }, { closed: number }];
}

export type MethodName = keyof EnvironmentMethods;
export const METHOD_NAMES: readonly MethodName[] = ['Health', 'ListEnvironments', 'GetTasks', 'CreateSessions', 'Step', 'CloseSessions'];

let definition: grpc.ServiceDefinition | undefined;

/** The service's definition, parsed from the .proto on first use (not at import). */
export function environmentService(): grpc.ServiceDefinition {
  if (!definition) {
    const loaded = grpc.loadPackageDefinition(loadSync(PROTO_FILE, LOAD_OPTIONS));
    const pkg = (loaded.drmas as grpc.GrpcObject).env as grpc.GrpcObject;
    definition = ((pkg.v1 as grpc.GrpcObject).EnvironmentService as grpc.ServiceClientConstructor).service;
  }
  return definition;
}

/** A client constructor for the service. */
export function environmentClient(): grpc.ServiceClientConstructor {
  return grpc.makeGenericClientConstructor(environmentService(), 'EnvironmentService');
}
