package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.kvguard.OperatorMain;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.OperatorHarness;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/**
 * The webhook as OperatorMain runs it, against the embedded API server: the operator issues its
 * certificate, writes the caBundle, and a client that trusts only that caBundle and checks the
 * Service's DNS name (as the API server does) is answered from the operator's informer cache: a pod
 * the new ModelDeployment selects gets the gate.
 */
class WebhookWiringIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SERVICE_NAME =
      "kvguard-webhook." + OperatorHarness.OPERATOR_NAMESPACE + ".svc";

  @Test
  void theRunningOperatorAnswersFromItsCacheOverTheCertificateItIssued() throws Exception {
    try (OperatorHarness h = new OperatorHarness()) {
      h.client
          .resource(
              new MutatingWebhookConfigurationBuilder()
                  .withNewMetadata()
                  .withName("kvguard-readiness-gate")
                  .endMetadata()
                  .addNewWebhook()
                  .withName("readiness-gate.kvguard.io")
                  .withNewClientConfig()
                  .withNewService()
                  .withName("kvguard-webhook")
                  .withNamespace(OperatorHarness.OPERATOR_NAMESPACE)
                  .endService()
                  .endClientConfig()
                  .withAdmissionReviewVersions("v1")
                  .withSideEffects("None")
                  .endWebhook()
                  .build())
          .create();
      Path certDir = Files.createTempDirectory("kvguard-webhook-wiring");
      WebhookSettings settings =
          new WebhookSettings(
              true, 0, certDir, "kvguard-webhook-tls", "kvguard-readiness-gate", "kvguard-webhook");
      try (OperatorMain.Serving serving =
          OperatorMain.serve(
              h.client, OperatorHarness.productionConfig(), settings, h.registry, false)) {
        h.create(
            h.modelDeployment(
                "glm",
                131_072,
                OperatorHarness.role("decode", Engine.SGLANG, Map.of("app", "glm"))));
        // The certificates are issued off the start path: the caBundle arrives shortly after.
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> caBundleText(h) != null && serving.webhook().serving());
        SSLContext trust = trusting(caBundle(h));

        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> {
                  JsonNode response =
                      post(trust, serving.webhook().port(), review(Map.of("app", "glm")))
                          .path("response");
                  assertThat(response.path("allowed").asBoolean()).isTrue();
                  assertThat(
                          new String(
                              Base64.getDecoder().decode(response.path("patch").asText()),
                              StandardCharsets.UTF_8))
                      .contains("kvguard.io/pool-verified");
                });
        JsonNode unselected =
            post(trust, serving.webhook().port(), review(Map.of("app", "other"))).path("response");
        assertThat(unselected.path("allowed").asBoolean()).isTrue();
        assertThat(unselected.has("patch")).isFalse();
        assertThat(serving.webhook().serving()).isTrue();
        assertThat(h.registry.scrape())
            .contains("kvguard_webhook_admissions_total{outcome=\"injected\"}");
      }
    }
  }

  private static X509Certificate[] caBundle(OperatorHarness h) throws Exception {
    return ServingCertificate.certificates(Base64.getDecoder().decode(caBundleText(h)));
  }

  private static String caBundleText(OperatorHarness h) {
    return h.client
        .admissionRegistration()
        .v1()
        .mutatingWebhookConfigurations()
        .withName("kvguard-readiness-gate")
        .get()
        .getWebhooks()
        .get(0)
        .getClientConfig()
        .getCaBundle();
  }

  private static byte[] review(Map<String, String> labels) throws Exception {
    ObjectNode review =
        JSON.createObjectNode()
            .put("apiVersion", "admission.k8s.io/v1")
            .put("kind", "AdmissionReview");
    ObjectNode request =
        review
            .putObject("request")
            .put("uid", "wiring")
            .put("namespace", OperatorHarness.NAMESPACE)
            .put("operation", "CREATE");
    request.putObject("kind").put("group", "").put("version", "v1").put("kind", "Pod");
    ObjectNode pod = request.putObject("object");
    pod.putObject("metadata").put("generateName", "glm-").set("labels", JSON.valueToTree(labels));
    pod.putObject("spec")
        .putArray("containers")
        .addObject()
        .put("name", "engine")
        .put("image", "sglang");
    return JSON.writeValueAsBytes(review);
  }

  /**
   * One POST as the API server makes it: TLS to the pod, the Service's name checked against the
   * certificate.
   */
  private static JsonNode post(SSLContext trust, int port, byte[] body) throws Exception {
    try (SSLSocket socket = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", port)) {
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setServerNames(List.of(new SNIHostName(SERVICE_NAME)));
      parameters.setEndpointIdentificationAlgorithm(null);
      socket.setSSLParameters(parameters);
      socket.setSoTimeout(5000);
      socket.startHandshake();
      X509Certificate served = (X509Certificate) socket.getSession().getPeerCertificates()[0];
      assertThat(served.getSubjectAlternativeNames())
          .anySatisfy(n -> assertThat(n.get(1)).isEqualTo(SERVICE_NAME));
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST "
                  + WebhookServer.PATH
                  + "?timeout=3s HTTP/1.1\r\nHost: "
                  + SERVICE_NAME
                  + "\r\nContent-Type: application/json\r\nContent-Length: "
                  + body.length
                  + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      in.transferTo(answer);
      String text = answer.toString(StandardCharsets.UTF_8);
      assertThat(text).startsWith("HTTP/1.1 200 ");
      return JSON.readTree(text.substring(text.indexOf("\r\n\r\n") + 4));
    }
  }

  private static SSLContext trusting(X509Certificate[] cas) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    for (int i = 0; i < cas.length; i++) {
      store.setCertificateEntry("ca" + i, cas[i]);
    }
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }
}
