import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { writeOAuthError } from "../oauth/error-response.js";
import { InvalidRequestError, OAuthError } from "../oauth/errors.js";
import { MalformedFormError } from "./form-body.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** `html` for browser pages; OAuth JSON otherwise. */
    errorFormat?: "html" | "oauth";
  }
}

/**
 * Turns what a request threw into its answer: OAuth errors as RFC 6749 §5.2
 * JSON, validation and body-parsing failures as `invalid_request`, CSRF
 * failures as 403, and anything else as `server_error` with nothing internal.
 * Browser pages get the same statuses as an HTML page.
 */
export async function handleError(this: unknown, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const known = classify(error);
  if (known.status >= 500) request.log.error({ err: error }, "request failed");
  if (request.routeOptions.config.errorFormat === "html") {
    const message = known.status >= 500 ? "Something went wrong on our side. Please try again." : known.page;
    await reply.code(known.status).header("cache-control", "no-store").view("error.eta", { title: known.title, message });
    return;
  }
  const wire = writeOAuthError(known.error);
  await reply.code(wire.status).headers(wire.headers).send(wire.body);
}

interface Classified {
  error: unknown;
  status: number;
  title: string;
  page: string;
}

/** A post whose CSRF token is missing or does not match the browser's secret. */
function csrfRefusal(): Classified {
  return {
    error: new InvalidRequestError("CSRF token missing or invalid"),
    status: 403,
    title: "Form expired",
    page: "This form has expired or did not come from this site. Go back, reload the page and try again.",
  };
}

function classify(error: FastifyError | Error): Classified {
  if (error instanceof OAuthError) {
    return { error, status: error.status, title: "Request refused", page: error.description ?? "The request was refused." };
  }
  const fastifyError = error as Partial<FastifyError>;
  if (typeof fastifyError.code === "string" && fastifyError.code.startsWith("FST_CSRF_")) return csrfRefusal();
  if (fastifyError.validation) {
    const first = fastifyError.validation[0];
    const parameter =
      (first?.params as { missingProperty?: string } | undefined)?.missingProperty ?? first?.instancePath.replace(/^\//, "") ?? "";
    // A form without its CSRF token (or with one no token can be) is refused as any other failed CSRF check.
    if (parameter === "_csrf") return csrfRefusal();
    const description = parameter ? `Invalid or repeated parameter: ${parameter}` : "Invalid request parameters";
    return invalidRequest(description);
  }
  if (error instanceof MalformedFormError) return invalidRequest(error.message);
  const status = fastifyError.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    const description =
      fastifyError.code === "FST_ERR_CTP_BODY_TOO_LARGE"
        ? "The request body is too large"
        : fastifyError.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE"
          ? "Unsupported content type"
          : "Malformed request";
    return invalidRequest(description);
  }
  return { error, status: 500, title: "Server error", page: "" };
}

function invalidRequest(description: string): Classified {
  return { error: new InvalidRequestError(description), status: 400, title: "Bad request", page: description };
}
