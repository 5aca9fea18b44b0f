// Usage: node packages/models/src/cli/generate-examples.ts [dir]   (default ./model-repository)
import { resolve } from 'node:path';
import { generateExampleRepository } from '../examples/generate-repository.ts';

const dir = resolve(process.argv[2] ?? './model-repository');
try {
  await generateExampleRepository(dir, { includeGenerative: true, includeDensenet: true, includeTritonExamples: true });
  console.log(`wrote example models (simple, classifier) to ${dir}`);
} catch (err) {
  console.error(`could not write example models to ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
