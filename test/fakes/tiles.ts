import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';

/** A PNG of one colour, 256 × 256 (what a tile server answers), built without an image library. */
function solidPng(rgb: [number, number, number], size = 256): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (data: Buffer) => {
    let c = 0xffffffff;
    for (const byte of data) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3).map((_, i) => rgb[i % 3]!)]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A local tile server for browser tests (no network): every `/{z}/{x}/{y}.png` is a pale tile; it counts what it served. */
export async function startFakeTileServer() {
  const tile = solidPng([226, 232, 220]);
  const served: string[] = [];
  const server = createServer((request, response) => {
    if (!/^\/\d+\/\d+\/\d+\.png$/.test(request.url ?? '')) return response.writeHead(404).end();
    served.push(request.url!);
    response.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=3600' }).end(tile);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    template: `http://127.0.0.1:${port}/{z}/{x}/{y}.png`,
    served,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
