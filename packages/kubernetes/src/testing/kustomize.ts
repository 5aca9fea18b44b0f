/** Test support: renders a kustomization the way a user applies it, with `kubectl kustomize`. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * `kubectl kustomize <dir>`'s output. A missing or too old kubectl is an error that says so: the manifests are
 * checked on every run, never skipped.
 */
export async function kustomize(dir: string): Promise<string> {
  try {
    const { stdout } = await run('kubectl', ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new Error(
        'kubectl is not installed: the manifests in deploy/kubernetes are rendered with `kubectl kustomize`. ' +
          'Install kubectl 1.27 or later (Kustomize v5). `bash scripts/nvcf.sh test`, run as root, installs ' +
          "Debian's kubernetes-client when kubectl is missing.",
      );
    }
    throw new Error(
      `kubectl kustomize ${dir} failed (it needs Kustomize v5, in kubectl 1.27 or later; ` +
        `\`kubectl version --client\` tells): ${e.stderr?.trim() || e.message}`,
    );
  }
}
