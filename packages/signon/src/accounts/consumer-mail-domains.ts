/** Each large service by its owner, with the forms it has in other countries (an address at any of them is personal). */
const services: Record<string, readonly string[]> = {
  google: ["gmail.com", "googlemail.com"],
  microsoft: [
    "hotmail.at", "hotmail.be", "hotmail.ca", "hotmail.ch", "hotmail.cl", "hotmail.co.id", "hotmail.co.il", "hotmail.co.in", "hotmail.co.jp",
    "hotmail.co.kr", "hotmail.co.nz", "hotmail.co.th", "hotmail.co.uk", "hotmail.co.za", "hotmail.com", "hotmail.com.ar", "hotmail.com.au",
    "hotmail.com.br", "hotmail.com.hk", "hotmail.com.tr", "hotmail.com.tw", "hotmail.com.vn", "hotmail.cz", "hotmail.de", "hotmail.dk",
    "hotmail.es", "hotmail.fi", "hotmail.fr", "hotmail.gr", "hotmail.hu", "hotmail.it", "hotmail.lt", "hotmail.lv", "hotmail.my", "hotmail.nl",
    "hotmail.no", "hotmail.ph", "hotmail.rs", "hotmail.se", "hotmail.sg", "hotmail.sk",
    "live.at", "live.be", "live.ca", "live.cl", "live.cn", "live.co.kr", "live.co.uk", "live.co.za", "live.com", "live.com.ar", "live.com.au",
    "live.com.mx", "live.com.my", "live.com.pt", "live.com.sg", "live.de", "live.dk", "live.fi", "live.fr", "live.hk", "live.ie", "live.in",
    "live.it", "live.jp", "live.nl", "live.no", "live.ru", "live.se",
    "outlook.at", "outlook.be", "outlook.cl", "outlook.co.id", "outlook.co.il", "outlook.co.nz", "outlook.co.th", "outlook.com", "outlook.com.ar",
    "outlook.com.au", "outlook.com.br", "outlook.com.gr", "outlook.com.pe", "outlook.com.tr", "outlook.com.vn", "outlook.cz", "outlook.de",
    "outlook.dk", "outlook.es", "outlook.fr", "outlook.hu", "outlook.ie", "outlook.in", "outlook.it", "outlook.jp", "outlook.kr", "outlook.lv",
    "outlook.my", "outlook.ph", "outlook.pt", "outlook.sa", "outlook.sg", "outlook.sk",
    "msn.com", "passport.com", "windowslive.com",
  ],
  yahoo: [
    "yahoo.at", "yahoo.be", "yahoo.ca", "yahoo.cn", "yahoo.co.id", "yahoo.co.in", "yahoo.co.jp", "yahoo.co.kr", "yahoo.co.nz", "yahoo.co.th",
    "yahoo.co.uk", "yahoo.co.za", "yahoo.com", "yahoo.com.ar", "yahoo.com.au", "yahoo.com.br", "yahoo.com.cn", "yahoo.com.co", "yahoo.com.hk",
    "yahoo.com.mx", "yahoo.com.my", "yahoo.com.pe", "yahoo.com.ph", "yahoo.com.sg", "yahoo.com.tr", "yahoo.com.tw", "yahoo.com.vn", "yahoo.de",
    "yahoo.dk", "yahoo.es", "yahoo.fr", "yahoo.gr", "yahoo.ie", "yahoo.in", "yahoo.it", "yahoo.nl", "yahoo.no", "yahoo.pl", "yahoo.ro", "yahoo.se",
    "rocketmail.com", "ymail.com",
  ],
  apple: ["icloud.com", "mac.com", "me.com"],
  aol: ["aim.com", "aol.co.uk", "aol.com", "aol.de", "aol.fr"],
  proton: ["pm.me", "proton.me", "protonmail.ch", "protonmail.com"],
  // GMX, Web.de and mail.com belong to one company.
  unitedInternet: ["email.com", "gmx.at", "gmx.ch", "gmx.co.uk", "gmx.com", "gmx.de", "gmx.es", "gmx.fr", "gmx.net", "gmx.us", "mail.com", "web.de"],
  tuta: ["tuta.com", "tuta.io", "tutamail.com", "tutanota.com", "tutanota.de"],
  yandex: ["ya.ru", "yandex.by", "yandex.com", "yandex.com.tr", "yandex.kz", "yandex.ru", "yandex.ua"],
  mailRu: ["bk.ru", "inbox.ru", "internet.ru", "list.ru", "mail.ru"],
  zoho: ["zoho.com", "zohomail.com"],
  // Smaller paid or free services people use for themselves.
  independent: ["fastmail.com", "fastmail.fm", "hey.com", "mailbox.org", "posteo.de", "posteo.net"],
  // The big national services, and the mail of large home internet providers.
  national: [
    "126.com", "163.com", "aliyun.com", "foxmail.com", "qq.com", "sina.cn", "sina.com", "sohu.com", "yeah.net",
    "daum.net", "hanmail.net", "naver.com",
    "rediffmail.com",
    "rambler.ru",
    "freenet.de", "t-online.de",
    "free.fr", "laposte.net", "orange.fr", "sfr.fr", "wanadoo.fr",
    "libero.it", "virgilio.it",
    "interia.pl", "o2.pl", "onet.pl", "op.pl", "wp.pl",
    "seznam.cz",
    "btinternet.com", "sky.com", "virginmedia.com",
    "att.net", "comcast.net", "sbcglobal.net", "verizon.net",
  ],
};

/**
 * Personal mail services whose addresses are refused for new people and
 * e-mail changes when `SIGNON_EMAIL_DOMAINS_BLOCKED` is not set: the large
 * free or consumer services in every country's form they have (Outlook,
 * Hotmail and Live; Yahoo; GMX and Web.de; …), not every service there is.
 * Like any entry of the block list, each covers its subdomains. In
 * lower-case ASCII, sorted.
 */
export const consumerMailDomains: readonly string[] = [...new Set(Object.values(services).flat())].sort();
