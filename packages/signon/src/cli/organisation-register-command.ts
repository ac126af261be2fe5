import { fetchOrganisationRegister, type RegisterRowResult } from "../accounts/organisation-register/fetch-organisation-register.js";
import type { Command } from "./output.js";

const rowJson = (result: RegisterRowResult) => ({
  slug: result.slug,
  page: result.page,
  item: result.item,
  outcome: result.outcome,
  ...(result.message === undefined ? {} : { message: result.message }),
});

/** `signon organisations fetch-register`: the scheduled fetch of the organisation register, now. */
export const organisationRegisterCommands: Record<string, Command> = {
  "organisations fetch-register": {
    usage: "signon organisations fetch-register [--json]   (fetches SIGNON_ORGANISATION_REGISTER_URL now and applies it, all or nothing)",
    options: {},
    async run(ctx) {
      const outcome = await fetchOrganisationRegister(ctx, { force: true });
      switch (outcome.status) {
        case "fetched": {
          const changes = outcome.results.filter((result) => result.outcome !== "unchanged");
          return {
            json: {
              status: "fetched",
              register: outcome.register,
              pages: outcome.pages,
              organisations: outcome.organisations,
              counts: { created: outcome.created, updated: outcome.updated, unchanged: outcome.unchanged },
              changes: changes.map(rowJson),
            },
            text: [
              ...changes.map((result) => `${result.outcome}\t${result.slug ?? "-"}${result.message ? `\t${result.message}` : ""}`),
              `Fetched ${outcome.organisations} organisation(s) on ${outcome.pages} page(s) from ${outcome.register}: ` +
                `created ${outcome.created}, updated ${outcome.updated}, left ${outcome.unchanged} unchanged; none deleted.`,
            ],
          };
        }
        case "failed":
          return {
            json: { status: "failed", register: outcome.register, error: outcome.error, invalid: outcome.invalid.map(rowJson) },
            text: [
              ...outcome.invalid.map((result) => `page ${result.page} item ${result.item}\tinvalid\t${result.slug ?? "-"}\t${result.message ?? ""}`),
              `The fetch from ${outcome.register} failed and changed nothing: ${outcome.error}`,
            ],
            exitCode: 1,
          };
        default:
          // Forced, it is never "not due"; "stopped" needs a signal, which the command line does not pass.
          return {
            json: { status: outcome.status, register: outcome.register },
            text: [`Another fetch from ${outcome.register} is in progress (another instance or command); this one did nothing.`],
            exitCode: 1,
          };
      }
    },
  },
};
