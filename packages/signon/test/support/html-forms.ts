import { decodeEntities } from "./browser.js";

/**
 * The forms of a page as a browser sees them, read from the HTML the
 * templates write (double-quoted attributes, escaped text): enough to post
 * a form as a person would and to find what a page says by a field.
 */

/** A field of a form: an input, a text area or a list. */
export interface FormControl {
  readonly tag: "input" | "textarea" | "select";
  /** The input's type (`text` when it has none); `textarea` and `select` for those. */
  readonly type: string;
  readonly name: string | undefined;
  readonly id: string | undefined;
  /** The value a browser would send: the text area's text, the list's chosen option. */
  readonly value: string;
  readonly maxlength: string | undefined;
  readonly checked: boolean;
  readonly disabled: boolean;
  /** The ids in `aria-describedby`. */
  readonly describedBy: readonly string[];
}

export interface HtmlForm {
  readonly method: string;
  /** The action as written, entities decoded. */
  readonly action: string;
  readonly enctype: string;
  readonly controls: readonly FormControl[];
}

/** The input types a person types into (`maxlength` applies to them). */
const TYPED_INPUTS = new Set(["text", "email", "password", "url", "search", "tel", "number"]);

/** Whether a field is one a person types into: a text area, or an input of a typed kind, not hidden. */
export function isTyped(control: FormControl): boolean {
  return control.name !== undefined && (control.tag === "textarea" || (control.tag === "input" && TYPED_INPUTS.has(control.type)));
}

/** The attributes of a start tag's inside, names in lower case, values decoded; a bare attribute is `""`. */
export function attributesOf(inside: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of inside.matchAll(/([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = (match[1] as string).toLowerCase();
    if (!attributes.has(name)) attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""));
  }
  return attributes;
}

function control(tag: FormControl["tag"], attributes: Map<string, string>, value: string): FormControl {
  return {
    tag,
    type: tag === "input" ? (attributes.get("type") ?? "text").toLowerCase() : tag,
    name: attributes.get("name"),
    id: attributes.get("id"),
    value,
    maxlength: attributes.get("maxlength"),
    checked: attributes.has("checked"),
    disabled: attributes.has("disabled"),
    describedBy: (attributes.get("aria-describedby") ?? "").split(/\s+/).filter((id) => id !== ""),
  };
}

function selectedValue(options: string): string {
  const all = [...options.matchAll(/<option\b([^>]*)>([\s\S]*?)<\/option>/g)].map((match) => {
    const attributes = attributesOf(match[1] as string);
    return { value: attributes.get("value") ?? decodeEntities(textOf(match[2] as string)), selected: attributes.has("selected") };
  });
  return (all.find((option) => option.selected) ?? all[0])?.value ?? "";
}

/** Every form of the page, with its fields in order. */
export function parseForms(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const form of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const attributes = attributesOf(form[1] as string);
    const controls: FormControl[] = [];
    for (const match of (form[2] as string).matchAll(/<input\b([^>]*)>|<textarea\b([^>]*)>([\s\S]*?)<\/textarea>|<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
      if (match[1] !== undefined) {
        const inputAttributes = attributesOf(match[1]);
        controls.push(control("input", inputAttributes, inputAttributes.get("value") ?? ""));
      } else if (match[2] !== undefined) controls.push(control("textarea", attributesOf(match[2]), decodeEntities(match[3] as string)));
      else controls.push(control("select", attributesOf(match[4] as string), selectedValue(match[5] as string)));
    }
    forms.push({
      method: (attributes.get("method") ?? "get").toLowerCase(),
      action: attributes.get("action") ?? "",
      enctype: attributes.get("enctype") ?? "application/x-www-form-urlencoded",
      controls,
    });
  }
  return forms;
}

/** What a browser sends for a form: each named field that is on, with its value, in order. */
export function successfulFields(form: HtmlForm): [string, string][] {
  return form.controls
    .filter((field) => field.name !== undefined && !field.disabled && field.type !== "file" && field.type !== "submit" && field.type !== "button")
    .filter((field) => (field.type === "checkbox" || field.type === "radio" ? field.checked : true))
    .map((field) => [field.name as string, field.type === "checkbox" || field.type === "radio" ? field.value || "on" : field.value]);
}

/** Text without its tags, entities decoded, spaces collapsed. */
export function textOf(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
}

/** The text of the element with this id, or `undefined`. */
export function textById(html: string, id: string): string | undefined {
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`<(\\w+)\\b[^>]*\\bid="${escaped}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return match === null ? undefined : textOf(match[2] as string);
}

/** The same-site addresses a page leads to: its links, and the actions of its GET forms. */
export function linksOf(html: string, origin: string): string[] {
  const links: string[] = [];
  for (const match of html.matchAll(/<a\b([^>]*)>/g)) {
    const href = attributesOf(match[1] as string).get("href");
    if (href !== undefined) links.push(href);
  }
  for (const form of parseForms(html)) if (form.method === "get") links.push(form.action);
  return links
    .map((href) => (href.startsWith(origin) ? href.slice(origin.length) : href))
    .filter((href) => href.startsWith("/") && !href.startsWith("//"))
    .map((href) => href.split("#")[0] as string);
}
