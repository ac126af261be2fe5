// How the services' output reaches npm start's own: line by line, each line marked with its service.
import { createRequire } from "node:module";

/** pino-pretty, loaded only for readable output: JSON output passes lines on as they are. */
const loadPinoPretty = () => createRequire(import.meta.url)("pino-pretty");

const prettyOptions = { translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname", singleLine: true };

/**
 * A writer for one service's stream. `json`: each JSON log line gets a leading
 * `"service"` field and stays one JSON object per line, and any other line
 * (a message printed as text) becomes one, its text the `msg` and its level
 * `textLevel` or the one given with the line (pino's: 30 info, 40 warn; an
 * empty line is left out); `pretty`: each becomes a readable line
 * (pino-pretty), and other lines are prefixed with the name.
 * @param {string} name
 * @param {"pretty" | "json"} format
 * @param {NodeJS.WritableStream & { isTTY?: boolean }} target
 * @param {number} [textLevel]
 * @returns {(line: string, level?: number) => string}
 */
export function serviceLineWriter(name, format, target, textLevel = 30) {
  const prefix = `${name.padEnd(10)} | `;
  const prettify = format === "pretty" ? loadPinoPretty().prettyFactory({ ...prettyOptions, colorize: target.isTTY === true }) : null;
  const isJsonObject = (line) => line.startsWith("{") && line.endsWith("}");
  const format1 = (line, level = textLevel) => {
    if (!isJsonObject(line)) {
      if (prettify !== null) return `${prefix}${line}\n`;
      return line.trim() === "" ? "" : `${JSON.stringify({ service: name, level, time: Date.now(), msg: line })}\n`;
    }
    if (prettify === null) return line === "{}" ? `{"service":${JSON.stringify(name)}}\n` : `{"service":${JSON.stringify(name)},${line.slice(1)}\n`;
    return prettify(line)
      .replace(/\n$/, "")
      .split("\n")
      .map((part) => `${prefix}${part}\n`)
      .join("");
  };
  return format1;
}

/**
 * Sends what `stream` prints to `target`, a whole line at a time, formatted by `formatLine`.
 * @param {NodeJS.ReadableStream} stream
 * @param {(line: string) => string} formatLine
 * @param {NodeJS.WritableStream} target
 */
export function forwardLines(stream, formatLine, target) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) target.write(formatLine(line));
  });
  stream.on("end", () => {
    if (rest !== "") target.write(formatLine(rest));
  });
}
