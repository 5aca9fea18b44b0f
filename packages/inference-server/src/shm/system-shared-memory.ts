import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, type SharedMemoryRef } from '@nvcf/protocol';

/** A registered window of a POSIX shared memory object (Triton shared memory extension). */
export interface SharedMemoryRegion {
  name: string;
  /** The object's key as the client gave it (`/input_simple`). */
  key: string;
  /** Where the window starts in the object. */
  offset: number;
  byteSize: number;
}

/**
 * The system shared memory regions one server's clients registered, shared by its HTTP and gRPC surfaces.
 * Reads and writes are positional file I/O on the object under `/dev/shm` (Node has no mmap): the object is
 * memory (tmpfs), so each is a memory copy, done synchronously in the request that needs it.
 */
export interface SystemSharedMemory {
  /** Registered regions, or the one named. @throws AppError NOT_FOUND for an unknown name. */
  status(name?: string): SharedMemoryRegion[];
  /** @throws AppError with Triton's texts (disabled, bad key, name taken, object missing or too small). */
  register(region: SharedMemoryRegion): void;
  /** @throws AppError UNIMPLEMENTED (Triton's text) when clients may not register regions. */
  assertEnabled(): void;
  /** Unregisters the named region (unknown: nothing happens) or, without a name, all of them. */
  unregister(name?: string): void;
  /** An input's bytes. @throws AppError NOT_FOUND / INVALID_ARGUMENT with Triton's texts. */
  read(ref: SharedMemoryRef, label: string): Uint8Array;
  /** Writes an output's bytes into its region. @throws AppError INTERNAL when they do not fit its byte size. */
  write(ref: SharedMemoryRef, bytes: Uint8Array, output: string): void;
  close(): void;
}

export interface SystemSharedMemoryOptions {
  /** Triton's `--allow-client-shm`: without it, register and unregister are refused (status still answers). */
  allowClientShm: boolean;
  /** Where POSIX shared memory objects live; `/dev/shm` on Linux (glibc's shm_open). */
  directory?: string;
  /** How the refusal names the switch that enables client shared memory. */
  enableHint?: string;
}

/** Python backend regions use this prefix; Triton refuses it to clients. */
const RESERVED_PREFIX = 'triton_python_backend_shm_region_';

interface OpenRegion extends SharedMemoryRegion {
  fd: number;
}

export function createSystemSharedMemory(opts: SystemSharedMemoryOptions): SystemSharedMemory {
  const directory = opts.directory ?? '/dev/shm';
  const regions = new Map<string, OpenRegion>();

  const checkAllowed = () => {
    if (!opts.allowClientShm) {
      throw new AppError(
        'UNIMPLEMENTED',
        `Client shared memory is disabled. ${opts.enableHint ?? "Start the server with '--allow-client-shm=true' to enable."}`,
      );
    }
  };

  const drop = (region: OpenRegion) => {
    regions.delete(region.name);
    closeSync(region.fd);
  };

  return {
    status: (name) => statusOf(regions, name),

    assertEnabled: () => checkAllowed(),

    register(region) {
      checkAllowed();
      const file = objectFileOf(region);
      if (regions.has(region.name)) {
        throw new AppError('ALREADY_EXISTS', `shared memory region '${region.name}' already in manager`);
      }
      regions.set(region.name, openRegion(join(directory, file), region));
    },

    unregister(name) {
      checkAllowed();
      if (name === undefined) for (const region of [...regions.values()]) drop(region);
      else {
        const region = regions.get(name);
        if (region) drop(region);
      }
    },

    read: (ref) => readRegion(locate(regions, ref), ref.byteSize),

    write(ref, bytes, output) {
      if (bytes.byteLength > ref.byteSize) {
        throw new AppError(
          'INTERNAL',
          `shared memory size specified with the request for output '${output}' (${ref.byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`,
        );
      }
      writeRegion(locate(regions, ref), bytes);
    },

    close() {
      for (const region of [...regions.values()]) drop(region);
    },
  };
}

function statusOf(regions: Map<string, OpenRegion>, name: string | undefined): SharedMemoryRegion[] {
  const all = name === undefined ? [...regions.values()] : [regions.get(name)];
  return all.map((r) => {
    if (!r) throw new AppError('NOT_FOUND', `Unable to find system shared memory region: '${name}'`);
    return { name: r.name, key: r.key, offset: r.offset, byteSize: r.byteSize };
  });
}

/** The file of a region's object under the shared memory directory. @throws AppError INVALID_ARGUMENT */
function objectFileOf({ name, key }: SharedMemoryRegion): string {
  if (key.includes(RESERVED_PREFIX)) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `cannot register shared memory region '${name}' with key '${key}' as the key contains the reserved prefix '${RESERVED_PREFIX}'`,
    );
  }
  // glibc's shm_open drops leading slashes and refuses any other: the object is a file directly in
  // /dev/shm, so no key can name a path outside it.
  const file = key.replace(/^\/+/, '');
  if (file === '' || file.includes('/') || file === '.' || file === '..') {
    throw new AppError('INVALID_ARGUMENT', `cannot register shared memory region '${name}' - invalid shm key '${key}'`);
  }
  return file;
}

function openRegion(path: string, { name, key, offset, byteSize }: SharedMemoryRegion): OpenRegion {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch (err) {
    throw new AppError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause: err });
  }
  if (fstatSync(fd).size < offset + byteSize) {
    closeSync(fd);
    throw new AppError('INVALID_ARGUMENT', `failed to register shared memory region '${name}': invalid args`);
  }
  return { name, key, offset, byteSize, fd };
}

interface Window {
  region: OpenRegion;
  position: number;
}

/** The region and the object offset of `ref`'s window, checked as Triton checks it. */
function locate(regions: Map<string, OpenRegion>, ref: SharedMemoryRef): Window {
  const region = regions.get(ref.region);
  if (!region) throw new AppError('NOT_FOUND', `Unable to find shared memory region: '${ref.region}'`);
  if (ref.offset >= region.byteSize && !(ref.offset === 0 && region.byteSize === 0)) {
    throw new AppError('INVALID_ARGUMENT', `Invalid offset for shared memory region: '${ref.region}'`);
  }
  if (ref.offset + ref.byteSize > region.byteSize) {
    throw new AppError('INVALID_ARGUMENT', `Invalid offset + byte size for shared memory region: '${ref.region}'`);
  }
  return { region, position: region.offset + ref.offset };
}

function readRegion({ region, position }: Window, byteSize: number): Uint8Array {
  const bytes = Buffer.allocUnsafe(byteSize);
  let done = 0;
  while (done < bytes.length) {
    const n = readSync(region.fd, bytes, done, bytes.length - done, position + done);
    // The object shrank under its registration (the client truncated it): what is missing reads as zeros.
    if (n === 0) {
      bytes.fill(0, done);
      break;
    }
    done += n;
  }
  return bytes;
}

function writeRegion({ region, position }: Window, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.byteLength) {
    done += writeSync(region.fd, bytes, done, bytes.byteLength - done, position + done);
  }
}
