/**
 * Personal mail services whose addresses are refused for new people and
 * e-mail changes when `SIGNON_EMAIL_DOMAINS_BLOCKED` is not set: the large
 * free or consumer services, not every one there is. Like any entry of the
 * block list, each covers its subdomains. In lower-case ASCII, sorted.
 */
export const consumerMailDomains: readonly string[] = [
  "163.com",
  "aol.com",
  "fastmail.com",
  "gmail.com",
  "gmx.com",
  "gmx.de",
  "gmx.net",
  "googlemail.com",
  "hotmail.co.uk",
  "hotmail.com",
  "hotmail.fr",
  "icloud.com",
  "live.co.uk",
  "live.com",
  "mac.com",
  "mail.com",
  "mail.ru",
  "me.com",
  "msn.com",
  "outlook.com",
  "pm.me",
  "proton.me",
  "protonmail.com",
  "qq.com",
  "rocketmail.com",
  "tuta.io",
  "tutanota.com",
  "web.de",
  "yahoo.co.uk",
  "yahoo.com",
  "yandex.com",
  "yandex.ru",
  "ymail.com",
];
