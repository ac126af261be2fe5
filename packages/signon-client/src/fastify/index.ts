export { signonClientPlugin, type SignonPluginOptions, type SignonDecoration } from "./plugin.js";
export type { SignonGuards, ForbiddenHandler } from "./guards.js";
export { USER_UPDATE_PERMISSION } from "./receiver-routes.js";
export { apiErrors, sendApiError, type ApiErrorCode } from "./bearer-errors.js";
export type { BrowserRoutePaths } from "./browser-routes.js";
