/**
 * The mutating admission webhook that adds kvguard's readiness gate to the pods an Enforce-mode
 * ModelDeployment selects, at creation (issue 18 §1). {@link io.kvguard.webhook.GateInjection}
 * decides, purely, from the AdmissionReview and the namespace's ModelDeployments; {@link
 * io.kvguard.webhook.WebhookServer} serves it over TLS without blocking on any one connection;
 * {@link io.kvguard.webhook.ServingCertificate} reloads the key pair from its files and {@link
 * io.kvguard.webhook.SelfManagedCertificates} issues and rotates it where cert-manager does not.
 * Nothing here ever denies a pod or reads the network while answering.
 */
package io.kvguard.webhook;
