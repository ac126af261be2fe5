// Starts every Tessera service that exists in this checkout.
// No service is implemented yet: say so plainly instead of pretending.
console.log(
  "Tessera: no runnable service exists in this checkout yet.\n" +
    "The request-options library (packages/endpoint) is a library, not a server.\n" +
    "See README.md for what is available and `npm test` to check it.",
);
