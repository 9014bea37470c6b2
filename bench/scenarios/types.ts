import type { Backend } from '../handlers/types.js';

export interface Job {
  scenario: string;
  backend: string;
  /** The store directory (a seeded dataset, or an empty directory the scenario fills). */
  dir: string;
  params: Record<string, unknown>;
  /** Where the child writes its ScenarioOutput as JSON. */
  out: string;
}

export interface ScenarioOutput {
  /** One number per metric for this run (a per-run median where the run repeats an operation). */
  metrics: Record<string, number>;
  /** The answers the handler gave, keyed by what was asked; compared across handlers. */
  answers: Record<string, string>;
}

export type Scenario = (backend: Backend, job: Job) => Promise<ScenarioOutput>;
