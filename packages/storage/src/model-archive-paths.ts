/**
 * Which entries of a zipped Triton model directory are extracted. Triton's repository layout
 * (https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/model_repository.html)
 * needs `config.pbtxt`, label files (`label_filename`, relative to the model directory) and numeric
 * version directories holding `model.onnx` and the ONNX external-data files it names (relative to it).
 * Everything else in an archive (`__MACOSX/`, READMEs, scripts) is skipped, never written.
 */

const VERSION_DIR = /^[1-9]\d*$/;
/** A path segment we write to disk: no leading dot (no `.`, `..`, hidden files), a portable alphabet. */
const SAFE_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

type EntryPlace =
  /** Not part of a model directory: skipped. */
  | { kind: 'skip' }
  /** Written under `path`; `wrapper` is the archive's top folder the model directory sits in, or ''. */
  | { kind: 'extract'; path: string; wrapper: string; text: boolean };

/**
 * Entry names that would leave the extraction directory are not skipped but refused: an archive that
 * holds one is hostile or broken, and the caller should say so.
 *
 * @returns the reason, or undefined for a name that stays inside.
 */
export function unsafeEntryName(name: string): string | undefined {
  if (name.includes('\0')) return 'a NUL byte';
  const n = name.replace(/\\/g, '/');
  if (n.startsWith('/') || /^[A-Za-z]:/.test(n)) return 'an absolute path';
  if (n.split('/').some((s) => s === '..')) return "a '..' segment";
  return undefined;
}

/** Where a (safe) entry goes relative to its model directory, read either at the root or in one top folder. */
export function placeEntry(name: string): EntryPlace {
  const segments = name.replace(/\\/g, '/').split('/');
  if (segments.at(-1) === '') return { kind: 'skip' }; // a directory entry
  const asModelPath = (rest: string[]) => {
    if (!rest.every((s) => SAFE_SEGMENT.test(s))) return undefined;
    if (rest.length === 1) {
      const [file] = rest as [string];
      if (file === 'config.pbtxt' || file.endsWith('.txt')) return { path: file, text: true };
      return undefined;
    }
    return VERSION_DIR.test(rest[0] as string) ? { path: rest.join('/'), text: false } : undefined;
  };
  const atRoot = asModelPath(segments);
  if (atRoot) return { kind: 'extract', wrapper: '', ...atRoot };
  const [top, ...rest] = segments as [string, ...string[]];
  if (rest.length === 0 || VERSION_DIR.test(top) || !SAFE_SEGMENT.test(top)) return { kind: 'skip' };
  const wrapped = asModelPath(rest);
  return wrapped ? { kind: 'extract', wrapper: top, ...wrapped } : { kind: 'skip' };
}

/** `<version>/model.onnx`: the file that makes a version directory a model version. */
export const versionOfModelPath = (path: string) => /^([1-9]\d*)\/model\.onnx$/.exec(path)?.[1];
