// Package sealing encrypts endpoint signing secrets at rest under the
// stack's KMS key, and opens them again in the deliver function.
//
// A sealed secret is the base64 (standard encoding) of the KMS ciphertext
// of the secret's text ("whsec_..."). Each is encrypted with an encryption
// context that binds it to its endpoint: purpose (Purpose), tenant_id and
// endpoint_id. KMS refuses to decrypt it under any other context, so a
// ciphertext copied onto another endpoint's record does not open there,
// and IAM policies can allow Encrypt or Decrypt only for this purpose
// (the condition key kms:EncryptionContext:purpose).
//
// Who may do what is the deployment's choice, held by the stack's template
// tests: the api function seals (Encrypt) when it creates or rotates a
// secret, and shows that secret once; only the deliver function opens
// (Decrypt). An Opener keeps what it opened, keyed by the endpoint and the
// ciphertext, for a bounded time and number of secrets, so a warm function
// calls KMS once per secret it has not seen, not once per delivery.
//
// Neither type logs, and no error they return holds a secret, plaintext or
// ciphertext.
package sealing
