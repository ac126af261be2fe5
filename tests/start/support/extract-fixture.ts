import { brotliDecompressSync } from "node:zlib";
import { readFile } from "node:fs/promises";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, normalize } from "node:path";

/**
 * Unpacks a brotli-compressed tar archive (ustar: regular files and folders,
 * as `tar --format=ustar` writes them) into `target`, with the files' modes;
 * no program besides Node.js is needed.
 */
export async function extractTarBr(archive: string, target: string): Promise<void> {
  const tar = brotliDecompressSync(await readFile(archive));
  const text = (from: number, length: number) => tar.toString("utf8", from, from + length).replace(/\0.*$/s, "");
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const name = text(offset, 100);
    if (name === "") break; // the two zero blocks that end the archive
    const prefix = text(offset + 345, 155);
    const path = normalize(prefix === "" ? name : `${prefix}/${name}`);
    if (path.startsWith("..") || path.startsWith("/")) throw new Error(`${archive}: ${path} lies outside the archive's folder`);
    const mode = parseInt(text(offset + 100, 8), 8);
    const size = parseInt(text(offset + 124, 12), 8);
    const type = text(offset + 156, 1);
    const destination = join(target, path);
    if (type === "5") await mkdir(destination, { recursive: true, mode });
    else if (type === "0" || type === "") {
      await mkdir(dirname(destination), { recursive: true });
      await writeFile(destination, tar.subarray(offset + 512, offset + 512 + size), { mode });
    } else throw new Error(`${archive}: ${path} is neither a file nor a folder (type ${type})`);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
}
