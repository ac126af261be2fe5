import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { deviseSha512, isImportedPasswordHash, signonSha512Hash, verifyImportedPassword } from "../../src/accounts/imported-passwords.js";
import { hashPassword, needsRehash, verifyPassword } from "../../src/accounts/password.js";
import { decryptActiveRecordValue, derivedKeys, UnreadableEncryptedValue } from "../../src/import-from-signon/active-record-encryption.js";

const cost = { memoryCost: 64, timeCost: 1, parallelism: 1 };

describe("password hashes imported from Signon", () => {
  // Devise's sha512 encryptor, computed independently (Python's hashlib) for these inputs.
  const password = "correct horse battery";
  const salt = "yzQ4xB8sQp3aH6dKf2Lm";
  const pepper = "fake-pepper";

  it("computes Devise's sha512 digest: the pepper first, then SHA-512 of --salt--digest--password--pepper-- each round", () => {
    expect(deviseSha512(password, 1, salt, pepper)).toBe("2936ace3840e4c9dc94b889b457b6029e7c07bb5ad78bc584d5b4af910daeae736a4cfe4dca90888b607862fbd54ffcfc6e968bc1cf1efacdb92edd2d563deb2");
    expect(deviseSha512(password, 10, salt, pepper)).toBe("51aaff718d0d70ee3e9eff14719c14dd952a85b95c3484e01bf7cd3384c2e27d7974723ea14e255d585cfb1e31b73a011ed37259403afd8a4cdff59587f6ed37");
    expect(deviseSha512(password, 1000, salt, pepper)).toBe("52e49acac15f75776b95b43f8091ce325a7995517c83baac3bf5d7b5025d34b4e9e6143d65307fc2ffdf6e4405182f877e3765d4af042acbabe070e3ae415828");
  });

  it("verifies a Signon sha512 hash with the pepper set, and nothing without it or with another", async () => {
    const stored = signonSha512Hash(1000, salt, "52e49acac15f75776b95b43f8091ce325a7995517c83baac3bf5d7b5025d34b4e9e6143d65307fc2ffdf6e4405182f877e3765d4af042acbabe070e3ae415828");
    expect(isImportedPasswordHash(stored)).toBe(true);
    expect(needsRehash(stored)).toBe(true);
    expect(await verifyPassword(stored, password, { ...cost, importedPepper: pepper })).toBe(true);
    expect(await verifyPassword(stored, "correct horse batterY", { ...cost, importedPepper: pepper })).toBe(false);
    expect(await verifyPassword(stored, password, { ...cost, importedPepper: "another-pepper" })).toBe(false);
    expect(await verifyPassword(stored, password, { ...cost, importedPepper: null })).toBe(false);
    expect(await verifyPassword(stored, password, cost)).toBe(false);
  });

  it("refuses a malformed imported hash instead of throwing", async () => {
    for (const stored of ["$signon-sha512$", "$signon-sha512$0$salt$" + "0".repeat(128), "$signon-sha512$1000000$salt$" + "0".repeat(128), "$signon-sha512$10$salt$nothex", "$signon-sha512$x$y$z"]) {
      expect(await verifyImportedPassword(stored, password, pepper)).toBe(false);
    }
  });

  it("verifies the bcrypt hashes of Signon's oldest accounts, which had no pepper", async () => {
    const stored = bcrypt.hashSync(password, 4).replace(/^\$2b\$/, "$2a$");
    expect(needsRehash(stored)).toBe(true);
    expect(await verifyPassword(stored, password, { ...cost, importedPepper: pepper })).toBe(true);
    expect(await verifyPassword(stored, "wrong", { ...cost, importedPepper: pepper })).toBe(false);
  });

  it("leaves Sign-on's own hashes as they are", async () => {
    const own = await hashPassword(password, cost);
    expect(needsRehash(own)).toBe(false);
    expect(await verifyPassword(own, password, { ...cost, importedPepper: pepper })).toBe(true);
  });
});

describe("Active Record encrypted values (Signon's 2-step secrets)", () => {
  it("opens the value Rails itself wrote in its own tests (SHA-1 key derivation, before Rails 7.1)", () => {
    // rails/rails activerecord/test/cases/encryption/encryptable_record_test.rb, "deterministic ciphertexts remain
    // constant": "Dune" under the test suite's deterministic key and key derivation salt.
    const keys = derivedKeys({ primaryKeys: ["test deterministic key"], derivationSalt: "testing key derivation salt" });
    expect(decryptActiveRecordValue('{"p":"DIohhw==","h":{"iv":"wEPaDcJP3VNIxaiz","at":"X7+2xvvcu1k1if6Dy28Esw=="}}', keys)).toBe("Dune");
  });

  it("opens a 2-step secret encrypted with the SHA-256 derivation Signon moved to, trying every primary key", () => {
    const keys = derivedKeys({ primaryKeys: ["an older key", "test master key"], derivationSalt: "testing key derivation salt" });
    const stored = '{"p":"+I3J4kDTzsvKHSFDSpex+ixfT6xVD0YFQl30FqiBbRg=","h":{"iv":"AAECAwQFBgcICQoL","at":"DVQ3KsJ3wNRpvwohPf8/Iw=="}}';
    expect(decryptActiveRecordValue(stored, keys)).toBe("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP");
    expect(decryptActiveRecordValue('{"p":"Q7YKrLlLVhwLWvlVI94fRXGG//zxTbPLYBNm+Y4ge3Y=","h":{"iv":"AAECAwQFBgcICQoL","at":"HUC99cYtoQ1qpkh7c6zIHg=="}}', keys)).toBe("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP");
  });

  it("says why a value cannot be read: other keys, not JSON, parts missing", () => {
    const keys = derivedKeys({ primaryKeys: ["not the key"], derivationSalt: "testing key derivation salt" });
    expect(() => decryptActiveRecordValue('{"p":"DIohhw==","h":{"iv":"wEPaDcJP3VNIxaiz","at":"X7+2xvvcu1k1if6Dy28Esw=="}}', keys)).toThrow(new UnreadableEncryptedValue("none of the keys given opens it"));
    expect(() => decryptActiveRecordValue("JBSWY3DPEHPK3PXP", keys)).toThrow(/not JSON/);
    expect(() => decryptActiveRecordValue('{"p":"DIohhw=="}', keys)).toThrow(/no p, h.iv or h.at/);
  });
});
