/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page of the editorial application: `body` is trusted HTML built with `escapeHtml`. */
export function page(title: string, body: string, signedInAs?: string): string {
  const account =
    signedInAs === undefined
      ? ""
      : `<p class="account">Signed in as ${escapeHtml(signedInAs)} · <a href="/auth/gds/sign_out">Sign out</a></p>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)} · Editorial</title></head>
<body>
<header><a href="/">Editorial</a> · <a href="/admin">Admin</a>${account}</header>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}
