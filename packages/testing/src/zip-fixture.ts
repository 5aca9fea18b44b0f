import { constants, crc32, deflateRawSync } from 'node:zlib';

/** One entry of a hand-built zip: its stored bytes and the sizes its headers declare. */
export interface ZipFixtureEntry {
  name: string;
  /** 0 stored, 8 deflate; anything else is written as given (for "unsupported method" cases). */
  method: number;
  data: Buffer;
  crc: number;
  size: number;
  /** Writes the sizes after the data (general-purpose flag bit 3), as streaming zippers (macOS, `zip -`) do. */
  descriptor?: boolean;
}

/** A file deflated (or stored, `method: 0`) the ordinary way. */
export function zipFile(name: string, content: string | Uint8Array, method = 8): ZipFixtureEntry {
  const raw = Buffer.from(content);
  return { name, method, data: method === 8 ? deflateRawSync(raw) : raw, crc: crc32(raw), size: raw.length };
}

/**
 * `mib` MiB of zeros deflated to about 1 KiB per MiB, built without inflating or deflating them: one
 * MiB is deflated once and flushed to a byte boundary, and that block repeated (a repeated block only
 * refers back inside itself), then an empty final block. A 900 MiB entry costs under 1 MB and
 * milliseconds.
 */
export function zipZeros(name: string, mib: number): ZipFixtureEntry {
  const zeros = Buffer.alloc(1 << 20);
  const block = deflateRawSync(zeros, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = crc32(zeros, crc);
  const finalEmptyBlock = Buffer.from([0x03, 0x00]);
  return { name, method: 8, data: Buffer.concat([...Array(mib).fill(block), finalEmptyBlock]), crc, size: mib << 20 };
}

/** A zip archive (local headers, central directory, end record) of `entries`, in order. */
export function buildZip(entries: ZipFixtureEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const flags = 0x0800 | (e.descriptor ? 0x0008 : 0);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(e.descriptor ? 0 : e.crc, 14);
    local.writeUInt32LE(e.descriptor ? 0 : e.data.length, 18);
    local.writeUInt32LE(e.descriptor ? 0 : e.size, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, e.data);
    let length = local.length + name.length + e.data.length;
    if (e.descriptor) {
      const dd = Buffer.alloc(16);
      dd.writeUInt32LE(0x08074b50, 0);
      dd.writeUInt32LE(e.crc, 4);
      dd.writeUInt32LE(e.data.length, 8);
      dd.writeUInt32LE(e.size, 12);
      parts.push(dd);
      length += dd.length;
    }
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(flags, 8);
    cd.writeUInt16LE(e.method, 10);
    cd.writeUInt16LE(0x21, 14);
    cd.writeUInt32LE(e.crc, 16);
    cd.writeUInt32LE(e.data.length, 20);
    cd.writeUInt32LE(e.size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    offset += length;
  }
  const cdBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cdBytes, end]);
}
