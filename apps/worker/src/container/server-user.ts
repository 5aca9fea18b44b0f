import { readFileSync } from 'node:fs';
import type { ServerUser } from './server-sandbox.ts';

/**
 * `WORKER_CONTAINER_USER`: `uid`, `uid:gid` or a user name from the passwd file (its primary group).
 *
 * @throws Error naming what is wrong (a name not in the passwd file, root, a malformed id)
 * @example
 * parseServerUser('65534:65534'); // { uid: 65534, gid: 65534 }
 * parseServerUser('nobody'); // { uid: 65534, gid: 65534 } on Debian
 */
export function parseServerUser(text: string, passwd: () => string = readPasswd): ServerUser {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(text);
  const user = numeric ? { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) } : byName(text, passwd());
  if (user.uid === 0 || user.gid === 0) {
    throw new Error(`'${text}' is root: a function's server must not run as root`);
  }
  return user;
}

function byName(name: string, passwd: string): ServerUser {
  for (const line of passwd.split('\n')) {
    const [entry, , uid, gid] = line.split(':');
    if (entry === name && uid !== undefined && gid !== undefined && /^\d+$/.test(uid) && /^\d+$/.test(gid)) {
      return { uid: Number(uid), gid: Number(gid) };
    }
  }
  throw new Error(`no user '${name}' in /etc/passwd (give a name, a uid or uid:gid)`);
}

function readPasswd(): string {
  try {
    return readFileSync('/etc/passwd', 'utf8');
  } catch {
    return '';
  }
}

/**
 * Why process mode cannot start as configured, or undefined. A worker running as root would hand every server
 * root, and a server of the worker's own user can read the worker's `/proc/<pid>/environ` (its Redis URL and
 * secrets key): as root, process mode needs a user of its own for its servers. A worker that is not root cannot
 * switch users, so a user other than its own is refused rather than ignored.
 */
export function processModeProblem(
  processes: boolean,
  user: ServerUser | undefined,
  workerUid: number | undefined,
): string | undefined {
  if (!processes || workerUid === undefined) return undefined;
  if (workerUid === 0 && !user) {
    return "the worker runs as root: process mode needs WORKER_CONTAINER_USER, a user of the servers' own (e.g. 'nobody' or '65534:65534'), so that a function's server is never root nor able to read the worker's environment";
  }
  if (workerUid !== 0 && user && user.uid !== workerUid) {
    return `a worker that is not root cannot run its servers as uid ${user.uid}: run the worker as root, or leave WORKER_CONTAINER_USER empty`;
  }
  return undefined;
}
