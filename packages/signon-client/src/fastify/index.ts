export { signonClientPlugin, type SignonPluginOptions, type SignonDecoration } from "./plugin.js";
export { bearerTokenGuard, type SignonGuards, type ForbiddenHandler } from "./guards.js";
export { signonBearerPlugin, type SignonBearerDecoration } from "./bearer-plugin.js";
export { USER_UPDATE_PERMISSION } from "./receiver-routes.js";
export { signonPushReceiversPlugin, type SignonPushReceiversOptions } from "./push-receivers-plugin.js";
export { apiErrors, sendApiError, type ApiErrorCode } from "./bearer-errors.js";
export type { BrowserRoutePaths } from "./browser-routes.js";
