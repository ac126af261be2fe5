/** Whether `key` configures the request itself (`method`, `baseUrl`, `url`, `headers`, `request`, `mediaType`): such options are never URL variables, query parameters or body keys. */
export function isOptionName(key: string): boolean {
  switch (key) {
    case "method":
    case "baseUrl":
    case "url":
    case "headers":
    case "request":
    case "mediaType":
      return true;
    default:
      return false;
  }
}
