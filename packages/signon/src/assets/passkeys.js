// Passkeys in the browser: served as /assets/passkeys.js under the pages' CSP (script-src 'self').
// A form marked data-passkey="register" or "authenticate" asks the server for options (a JSON post to
// its data-options-url with the CSRF token), runs the WebAuthn ceremony, puts the credential as JSON in
// its "response" field and submits itself; the server answers the form post as it answers any other.
// Its data-passkey-origin is the only origin a passkey works at (Sign-on's public URL): a page opened at
// another address says so and names the address to use, instead of starting a ceremony that must fail.
(function () {
  "use strict";

  function toBytes(base64url) {
    var base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
    var binary = atob(base64 + "===".slice((base64.length + 3) % 4));
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function descriptors(list) {
    return (list || []).map(function (item) {
      return { type: "public-key", id: toBytes(item.id), transports: item.transports };
    });
  }

  function creationOptions(json) {
    var options = Object.assign({}, json, {
      challenge: toBytes(json.challenge),
      user: Object.assign({}, json.user, { id: toBytes(json.user.id) }),
      excludeCredentials: descriptors(json.excludeCredentials),
    });
    return options;
  }

  function requestOptions(json) {
    return Object.assign({}, json, { challenge: toBytes(json.challenge), allowCredentials: descriptors(json.allowCredentials) });
  }

  function registrationJson(credential) {
    var response = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        attestationObject: toBase64url(response.attestationObject),
        transports: typeof response.getTransports === "function" ? response.getTransports() : undefined,
      },
    };
  }

  function authenticationJson(credential) {
    var response = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        authenticatorData: toBase64url(response.authenticatorData),
        signature: toBase64url(response.signature),
        userHandle: response.userHandle ? toBase64url(response.userHandle) : undefined,
      },
    };
  }

  function say(form, text) {
    var status = form.querySelector("[data-passkey-status]");
    if (status) status.textContent = text;
  }

  async function ceremony(form) {
    var answer = await fetch(form.getAttribute("data-options-url"), {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ _csrf: form.elements._csrf.value }),
    });
    if (!answer.ok) throw new Error(answer.status === 429 ? "Too many attempts. Wait a few minutes and try again." : "Sign-on could not start. Reload the page and try again.");
    var options = await answer.json();
    var credential;
    if (form.getAttribute("data-passkey") === "register") {
      credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
      return registrationJson(credential);
    }
    credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
    return authenticationJson(credential);
  }

  /** The origin passkeys work at when this page is not open there, else null. */
  function originElsewhere(form) {
    var expected = form.getAttribute("data-passkey-origin");
    return expected && expected !== window.location.origin ? expected : null;
  }

  // The browser would refuse the ceremony with a bare "This is an invalid domain." (or the server the answer,
  // for another port): say where passkeys work, as an error, and link to this page there.
  function sayWrongAddress(form, expected) {
    var status = form.querySelector("[data-passkey-status]");
    if (!status) return;
    var address = expected + window.location.pathname + window.location.search;
    var link = document.createElement("a");
    link.href = address;
    link.textContent = address;
    status.className = "error-message";
    status.setAttribute("role", "alert");
    status.replaceChildren(
      "Passkeys work only at " + expected + ", the address of Tessera Sign-on, and this page is open at " + window.location.origin + ". To use a passkey, go to ",
      link,
      ".",
    );
  }

  function attach(form) {
    form.hidden = false;
    var expected = originElsewhere(form);
    if (expected) {
      var disabled = form.querySelector("button[type=submit]");
      if (disabled) disabled.disabled = true;
      sayWrongAddress(form, expected);
      form.addEventListener("submit", function (event) {
        event.preventDefault();
      });
      return;
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      if (button) button.disabled = true;
      say(form, "Follow your browser's instructions to use your passkey…");
      ceremony(form)
        .then(function (json) {
          form.elements.response.value = JSON.stringify(json);
          say(form, "");
          form.submit();
        })
        .catch(function (error) {
          if (button) button.disabled = false;
          var cancelled = error && (error.name === "NotAllowedError" || error.name === "AbortError");
          say(form, cancelled ? "The passkey was not used. Try again when you are ready." : error && error.message ? error.message : "That did not work. Try again.");
        });
    });
  }

  if (!window.PublicKeyCredential || !navigator.credentials) {
    document.querySelectorAll("[data-passkey-unsupported]").forEach(function (note) {
      note.hidden = false;
    });
    return;
  }
  document.querySelectorAll("form[data-passkey]").forEach(attach);
})();
