// One benchmark child: the job written to a file, the child started on it, its outcome read back.
// Shared by the main run (run.ts) and the scale run (scale-run.ts).

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AnswerPrint } from './agreement.js';
import type { Job } from './scenarios/types.js';

export interface Outcome {
  metrics: Record<string, number>;
  answers: Record<string, AnswerPrint>;
}

export interface ChildSpec {
  exe: string;
  /** Arguments before the job file. */
  args: string[];
  cwd: string;
  jobFile: string;
  timeoutMs: number;
}

export function runJob(job: Job, spec: ChildSpec): Promise<Outcome> {
  writeFileSync(spec.jobFile, JSON.stringify(job));
  return new Promise((resolveJob, reject) => {
    const child = spawn(spec.exe, [...spec.args, spec.jobFile], {
      cwd: spec.cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 20_000) stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), spec.timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        try {
          resolveJob(JSON.parse(readFileSync(job.out, 'utf8')) as Outcome);
        } catch (err) {
          reject(err);
        }
      } else {
        const why = signal ? `killed by ${signal}${signal === 'SIGKILL' ? ' (timeout?)' : ''}` : `exit ${code}`;
        const lines = stderr.trim().split('\n');
        const shown = lines.length > 8 ? [...lines.slice(0, 4), '…', ...lines.slice(-3)] : lines;
        reject(new Error(`${job.scenario}/${job.backend} ${why}: ${shown.join('\n')}`));
      }
    });
  });
}
