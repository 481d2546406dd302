// What a capability (local profile servers, attestation, controller API v1, ...) adds to the
// scenario layer, so the core (schema, checks, builder, threshold grammar) iterates a registry
// (capabilities.ts) instead of naming each one. Every part is optional: a capability supplies
// what it has. Its runner side is src/runner/run-capability.ts.

import type { IssueCollector } from './issue-collector.js';
import type { ThresholdValueKind } from './threshold-kinds.js';
import type { GroupSpec, Scenario, TimelineAction } from './scenario-types.js';

/** A JSON schema fragment (ajv, with the loader's own `expect` annotation). */
export type SchemaFragment = Record<string, unknown>;

/** A part of the plain scenario document (before or after schema checks: access it guarded). */
export type DocumentPart = Record<string, unknown>;

export interface CapabilitySchema {
  /** Fields of a device group. */
  groupProperties?: Record<string, SchemaFragment>;
  /** Top-level fields of the scenario (e.g. `sites`, `attestation`). */
  scenarioProperties?: Record<string, SchemaFragment>;
  /** Timeline action names it adds, as error messages list them. */
  timelineActionNames?: readonly string[];
  /** One schema per timeline action it adds (`action: { const: name }`). */
  timelineActionSchemas?: readonly SchemaFragment[];
}

export interface ScenarioCapability {
  readonly name: string;
  readonly schema?: CapabilitySchema;
  /**
   * Where its group fields go among the core's (in the schema, hence in "expected one of ..."
   * messages, and in the built GroupSpec): right after name and count, or after the core's own
   * fields (the default).
   */
  readonly groupFieldsAfter?: 'count' | 'core';
  /** Rules the schema cannot say; runs on the whole plain document even when the schema failed. */
  check?(doc: DocumentPart, issues: IssueCollector): void;
  /** Its fields of a GroupSpec, from a checked group of the document. */
  buildGroup?(group: DocumentPart): Partial<GroupSpec>;
  /** Its sections of the Scenario, from the checked document. */
  buildScenario?(doc: DocumentPart, scenario: Scenario): void;
  /** A timeline action of its own, or undefined when the action is not one of its. */
  buildTimelineAction?(atMs: number, action: DocumentPart & { action: string }): TimelineAction | undefined;
  /** Threshold subjects it measures and their stats (judged by its runner side). */
  thresholdSubjects?: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>>;
}
