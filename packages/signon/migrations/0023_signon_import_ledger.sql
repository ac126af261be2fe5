CREATE TABLE "signon"."signon_import_ledger" (
	"key" text PRIMARY KEY NOT NULL,
	"fingerprint" text NOT NULL,
	"target" text NOT NULL,
	"imported_at" timestamp with time zone NOT NULL
);
