package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What a record keeps of an answer that carries the API key. */
class SecretRedactionTest {
  private static final String KEY = "sk-\u00e9t\u00e9/\"key\"-42";
  private final SecretRedaction redaction = SecretRedaction.of(KEY);

  private String bodyRedacted(String body, boolean cut) {
    return new String(
        redaction.bytes(body.getBytes(StandardCharsets.UTF_8), cut), StandardCharsets.UTF_8);
  }

  @Test
  void theKeyIsTakenOutAsSentJsonEscapedUnicodeEscapedAndUrlEncoded() {
    String body =
        "{\"a\":\""
            + KEY
            + "\",\"b\":\"sk-\u00e9t\u00e9/\\\"key\\\"-42\",\"c\":\"sk-\u00e9t\u00e9\\/\\\"key\\\"-42\","
            + "\"d\":\"\\u0073\\u006b\\u002d\\u00e9\\u0074\\u00e9\\u002f\\u0022\\u006b\\u0065\\u0079\\u0022\\u002d\\u0034\\u0032\","
            + "\"e\":\"sk-%C3%A9t%C3%A9%2F%22key%22-42\"}";

    assertThat(bodyRedacted(body, false))
        .isEqualTo(
            "{\"a\":\"<redacted>\",\"b\":\"<redacted>\",\"c\":\"<redacted>\","
                + "\"d\":\"<redacted>\",\"e\":\"<redacted>\"}");
  }

  @Test
  void theBeginningOfAKeyTheCapCutOffIsTakenOutButOrdinaryTextStays() {
    assertThat(bodyRedacted("{\"error\":\"bad key sk-\u00e9t\u00e9/", true))
        .isEqualTo("{\"error\":\"bad key <redacted>");
    assertThat(bodyRedacted("{\"error\":\"bad key sk-\u00e9t\u00e9/", false))
        .isEqualTo("{\"error\":\"bad key sk-\u00e9t\u00e9/");
    assertThat(bodyRedacted("ends in sk-", true)).isEqualTo("ends in sk-");
  }

  @Test
  void credentialHeadersAreBlankedWhateverTheyHold() {
    assertThat(redaction.header("Authorization", "Bearer other")).isEqualTo("<redacted>");
    assertThat(redaction.header("set-cookie", "session=1")).isEqualTo("<redacted>");
    assertThat(redaction.header("x-echo", "key " + KEY)).isEqualTo("key <redacted>");
    assertThat(redaction.header("content-type", "application/json")).isEqualTo("application/json");
  }

  @Test
  void jsonFieldsNamedAsSecretsLoseTheirStringValuesWhateverKeyWasGiven() {
    String body =
        "{\"api_key\":\"a\\\"b\",\"admin_api_key\": \"c\",\"hf_token\":\"d\","
            + "\"bos_token\":\"<s>\",\"max_total_num_tokens\":2040000,\"api_key_file\":null}";

    assertThat(
            new String(
                SecretRedaction.none().bytes(body.getBytes(StandardCharsets.UTF_8), false),
                StandardCharsets.UTF_8))
        .isEqualTo(
            "{\"api_key\":\"<redacted>\",\"admin_api_key\": \"<redacted>\","
                + "\"hf_token\":\"<redacted>\",\"bos_token\":\"<s>\","
                + "\"max_total_num_tokens\":2040000,\"api_key_file\":null}");
  }

  @Test
  void credentialsInUrlsAndSecretKeysAreTakenOut() {
    String body =
        "{\"model_path\":\"https://user:hf_abc@huggingface.co/m\",\"note\":\"sk-abcdefghijklmnop1234\","
            + "\"url\":\"http://10.0.0.7:30000/v1\"}";

    assertThat(
            new String(
                SecretRedaction.none().bytes(body.getBytes(StandardCharsets.UTF_8), false),
                StandardCharsets.UTF_8))
        .isEqualTo(
            "{\"model_path\":\"https://<redacted>@huggingface.co/m\",\"note\":\"<redacted>\","
                + "\"url\":\"http://10.0.0.7:30000/v1\"}");
  }

  @Test
  void aKeyTooShortToRedactSafelyIsRefused() {
    assertThatThrownBy(() -> SecretRedaction.of("1234567"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
