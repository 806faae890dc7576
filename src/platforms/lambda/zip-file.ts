import { crc32, deflateRawSync } from 'node:zlib';

// A ZIP archive (deflated entries, as AWS Lambda takes a function's code) of a few files in memory,
// deterministic: fixed timestamps (1980-01-01), entries in the order given.

/**
 * zlib's default level, as `zip` uses. Level 9 took 6.6 times the CPU for 8 % fewer bytes on a
 * 20k-city site's edge data (189 MB: 24.7 MB zipped in 3.7 CPU-s at 6, 22.6 MB in 24.1 at 9), 2 %
 * on 140k cities' (437 MB: 78.0 MB in 10.3, 76.5 MB in 35.2). Lambda refuses a package over
 * 250 MiB unzipped, which at those ratios zips to at most 45 MiB at 6 (44 at 9): under the 50 MiB
 * of a direct upload either way.
 */
const LEVEL = 6;

export function zipArchive(files: readonly { readonly name: string; readonly bytes: Uint8Array }[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const { name, bytes } of files) {
    const nameBytes = Buffer.from(name);
    const packed = deflateRawSync(bytes, { level: LEVEL });
    const crc = crc32(bytes);
    const common = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at); // version needed: 2.0
      header.writeUInt16LE(0x0800, at + 2); // names in UTF-8
      header.writeUInt16LE(8, at + 4); // deflate
      header.writeUInt16LE(0, at + 6); // time 00:00
      header.writeUInt16LE(0x21, at + 8); // date 1980-01-01
      header.writeUInt32LE(crc, at + 10);
      header.writeUInt32LE(packed.length, at + 14);
      header.writeUInt32LE(bytes.length, at + 18);
      header.writeUInt16LE(nameBytes.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    common(local, 4);
    locals.push(local, nameBytes, packed);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(0x0314, 4); // made by: Unix, 2.0
    common(entry, 6);
    entry.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
    entry.writeUInt32LE(offset, 42);
    central.push(entry, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
