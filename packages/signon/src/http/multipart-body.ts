import type { FastifyInstance, FastifyRequest } from "fastify";
import { InvalidRequestError } from "../oauth/errors.js";
import { MalformedFormError, type FormFields } from "./form-body.js";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const uploads = new WeakMap<FastifyRequest, Map<string, Buffer>>();

/** The bytes of the file sent in the field `name` of a `multipart/form-data` request, if any. */
export function uploadedFile(request: FastifyRequest, name: string): Buffer | undefined {
  return uploads.get(request)?.get(name);
}

/**
 * Registers, in the calling plugin only, a strict `multipart/form-data`
 * parser for forms with a file: text fields become form fields as in
 * `parseFormBody` (UTF-8, no NUL, repeated names as arrays); a part with a
 * `filename` is kept whole for {@link uploadedFile} and its field is set to
 * the file name. A malformed body is a 400; one over `bodyLimit` bytes a 413.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7578
 */
export function registerMultipartParser(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit }, (request, body, done) => {
    try {
      const { fields, files } = parseMultipart(request.headers["content-type"] ?? "", body as Buffer);
      uploads.set(request, files);
      done(null, fields);
    } catch (error) {
      done(error instanceof MalformedFormError ? new InvalidRequestError(error.message) : (error as Error), undefined);
    }
  });
}

/** Decodes a `multipart/form-data` body; throws `MalformedFormError` for anything out of shape. */
export function parseMultipart(contentType: string, body: Buffer): { fields: FormFields; files: Map<string, Buffer> } {
  const boundary = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  const marker = boundary?.[1] ?? boundary?.[2];
  if (!marker) throw new MalformedFormError("The multipart body has no boundary");
  const delimiter = Buffer.from(`--${marker}`);
  const fields: FormFields = Object.create(null) as FormFields;
  const files = new Map<string, Buffer>();
  let at = body.indexOf(delimiter);
  if (at < 0) throw new MalformedFormError("The multipart body has no parts");
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString("latin1") === "--") break;
    if (body.subarray(at, at + 2).toString("latin1") !== "\r\n") throw new MalformedFormError("The multipart body is malformed");
    const headersEnd = body.indexOf("\r\n\r\n", at + 2);
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), at);
    if (headersEnd < 0 || next < 0 || headersEnd > next) throw new MalformedFormError("The multipart body is malformed");
    const headers = body.subarray(at + 2, headersEnd).toString("latin1");
    const content = body.subarray(headersEnd + 4, next);
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers)?.[1] ?? "";
    const name = /(?:^|;)\s*name="([^"]*)"/i.exec(disposition)?.[1];
    const filename = /(?:^|;)\s*filename="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw new MalformedFormError("A part of the multipart body has no name");
    if (filename !== undefined) {
      if (files.has(name)) throw new MalformedFormError("A file field was sent twice");
      files.set(name, Buffer.from(content));
      add(fields, name, decode(Buffer.from(filename, "latin1")));
    } else {
      add(fields, name, decode(content));
    }
    at = next + 2;
  }
  return { fields, files };
}

function decode(bytes: Buffer): string {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new MalformedFormError("A field of the body is not valid UTF-8");
  }
  if (text.includes("\u0000")) throw new MalformedFormError("A field of the body contains a NUL character (U+0000)");
  return text;
}

function add(fields: FormFields, name: string, value: string): void {
  const existing = fields[name];
  if (existing === undefined) fields[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else fields[name] = [existing, value];
}
