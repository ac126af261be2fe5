/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A page of the editorial application: its header (name, navigation, who is
 * signed in and a way out), the title and `body`, trusted HTML built with
 * `escapeHtml`.
 */
export function page(title: string, body: string, signedInAs?: string): string {
  const account =
    signedInAs === undefined
      ? ""
      : `<p class="account">Signed in as <strong>${escapeHtml(signedInAs)}</strong> <a href="/auth/gds/sign_out">Sign out</a></p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Editorial</title>
<link rel="stylesheet" href="/assets/editorial.css">
</head>
<body>
<header class="site">
<div class="bar">
<a class="name" href="/">Editorial</a>
<nav aria-label="Site"><ul><li><a href="/">Home</a></li><li><a href="/admin">Admin</a></li></ul></nav>
${account}
</div>
</header>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
<footer class="site"><p>An example application that signs people in through Tessera Sign-on.</p></footer>
</body>
</html>
`;
}
