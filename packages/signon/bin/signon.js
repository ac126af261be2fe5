#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, which this package depends on.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
