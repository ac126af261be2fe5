import { join } from "node:path";
import type { Command } from "./output.js";
import { runFirstStart } from "../bootstrap/first-start.js";

function text(value: string | boolean | string[] | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * `signon bootstrap first-start`: the first-start set-up of `npm start`
 * (see {@link runFirstStart}); changes nothing when it has run before.
 */
export const firstStartCommand: Command = {
  usage:
    "signon bootstrap first-start [--admin-email E] [--admin-name N] [--completion-url URL] [--example-app-url URL] [--credentials-file PATH] [--json]",
  options: {
    "admin-email": { type: "string" },
    "admin-name": { type: "string" },
    "completion-url": { type: "string" },
    "example-app-url": { type: "string" },
    "credentials-file": { type: "string" },
  },
  async run(ctx, options) {
    const credentialsFile = text(options["credentials-file"]) ?? join(ctx.config.dataDir, "editorial-app.json");
    const result = await runFirstStart(ctx, {
      adminEmail: text(options["admin-email"]),
      adminName: text(options["admin-name"]),
      completionUrl: text(options["completion-url"]),
      exampleAppUrl: text(options["example-app-url"]),
      credentialsFile,
    });
    if (result.status === "done-before") {
      return {
        json: {
          status: result.status,
          completed_at: result.completedAt,
          admin_email: result.adminEmail,
          ...(result.completionClientId ? { completion_app: { client_id: result.completionClientId } } : {}),
        },
        text: [`First start already done (${result.completedAt}, administrator ${result.adminEmail}); nothing changed.`],
      };
    }
    return {
      json: {
        status: result.status,
        admin: { email: result.admin.email, uid: result.admin.uid, password: result.admin.password },
        completion_app: { name: result.completionApp.name, client_id: result.completionApp.clientId },
        example_app: { name: result.exampleApp.name, client_id: result.exampleApp.clientId, credentials_file: result.exampleApp.credentialsFile },
        api_client: { name: result.apiClient.name, email: result.apiClient.email, uid: result.apiClient.uid, access_token: result.apiClient.token, expires_at: result.apiClient.expiresAt },
      },
      text: [
        `Superadmin: ${result.admin.email}`,
        `Password:   ${result.admin.password}`,
        `Registered ${result.completionApp.name} and ${result.exampleApp.name}; credentials of ${result.exampleApp.name} in ${result.exampleApp.credentialsFile}.`,
        `Bearer token of ${result.apiClient.name} (${result.apiClient.email}) on ${result.completionApp.name}: ${result.apiClient.token}`,
        "The password and the token are shown only now.",
      ],
    };
  },
};
