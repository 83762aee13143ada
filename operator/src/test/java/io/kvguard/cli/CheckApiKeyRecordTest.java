package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvguard.probe.EngineHttp;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.FakeEngineOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code check --api-key-file} and {@code check --record} against fake engines. */
class CheckApiKeyRecordTest {
  private static final long WINDOW = 1_048_576;

  /** Quotes, a slash and a backslash: JSON escapes each, so an echo differs from the key. */
  private static final String KEY = "sk-te\"st/ke\\y-0123456789";

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private final List<FakeEngine> engines = new ArrayList<>();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @AfterEach
  void closeEngines() {
    engines.forEach(FakeEngine::close);
  }

  private String url(Map<String, Answer> answers, String requiredKey) throws IOException {
    FakeEngine engine = new FakeEngine().serve(answers).requireBearer(requiredKey);
    engines.add(engine);
    return "http://127.0.0.1:" + engine.port();
  }

  private static Map<String, Answer> sglang() {
    return FakeEngineOptions.sglang(2_040_000, 1, WINDOW, null).answers();
  }

  private int check(String... args) {
    out.reset();
    err.reset();
    return CheckCommand.standard()
        .run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private int checkSglang(String url, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--engine", "sglang", "--url", url, "--context-window", String.valueOf(WINDOW)));
    args.addAll(List.of(more));
    return check(args.toArray(String[]::new));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private Path keyFile(String content) throws IOException {
    Path file = dir.resolve("api-key-" + content.length());
    Files.writeString(file, content);
    return file;
  }

  @Test
  void theKeyFromTheFileIsSentAsABearerTokenAndItsLineBreakIsDropped() throws IOException {
    String url = url(sglang(), KEY);

    int exit = checkSglang(url, "--api-key-file", keyFile(KEY + "\n").toString());

    assertThat(exit).as(out() + err()).isZero();
    assertThat(out()).contains("Verified (PoolSufficient)");
  }

  @Test
  void anEngineThatWantsAKeyAndGetsNoneFailsWithAReasonNamingTheFlag() throws IOException {
    String url = url(sglang(), KEY);

    int exit = checkSglang(url);

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(out())
        .contains("HTTP 401", "it requires an API key and none was sent", "--api-key-file FILE");
  }

  @Test
  void aWrongKeyFailsWithAReasonNamingTheFileAndNotItsContent() throws IOException {
    String url = url(sglang(), KEY);
    Path wrong = keyFile("not-the-engines-key");

    int exit = checkSglang(url, "--api-key-file", wrong.toString());

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(out())
        .contains("HTTP 401 to the API key from --api-key-file " + wrong)
        .doesNotContain("not-the-engines-key");
  }

  @Test
  void aMissingEmptyOrUnusableKeyFileIsAUsageErrorThatNeverQuotesTheFile() throws IOException {
    Path missing = dir.resolve("missing");
    assertThat(checkSglang("http://127.0.0.1:1", "--api-key-file", missing.toString()))
        .isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err()).startsWith("kvguard check: --api-key-file " + missing + ": no such file");

    Path empty = keyFile(" \n");
    assertThat(checkSglang("http://127.0.0.1:1", "--api-key-file", empty.toString()))
        .isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err())
        .startsWith(
            "kvguard check: --api-key-file "
                + empty
                + " is empty: it must hold the engine's API key");

    Path twoLines = keyFile("first-secret-line\nsecond-secret-line\n");
    assertThat(checkSglang("http://127.0.0.1:1", "--api-key-file", twoLines.toString()))
        .isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err())
        .startsWith("kvguard check: --api-key-file " + twoLines + ": character 18 of the key")
        .doesNotContain("secret");

    assertThat(checkSglang("http://127.0.0.1:1", "--api-key-file", dir.toString()))
        .isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err()).startsWith("kvguard check: --api-key-file " + dir + " is a directory");
  }

  @Test
  void aKeyFileSavedByAWindowsEditorWithByteOrderMarkAndCrlfIsTheKeyAlone() throws IOException {
    String url = url(sglang(), KEY);
    Path windows = dir.resolve("api-key-windows");
    Files.write(windows, ("\uFEFF" + KEY + "\r\n").getBytes(StandardCharsets.UTF_8));

    int exit = checkSglang(url, "--api-key-file", windows.toString());

    assertThat(exit).as(out() + err()).isZero();
    assertThat(out()).contains("Verified (PoolSufficient)");
  }

  @Test
  void aKeyValueOnTheCommandLineIsRefusedWithoutRepeatingIt() {
    for (String[] given :
        List.of(
            new String[] {"--api-key", "cmdline-secret-value"},
            new String[] {"--api-key=cmdline-secret-value"})) {
      List<String> args = new ArrayList<>(List.of("--engine", "sglang", "--url", "http://h:1"));
      args.addAll(List.of(given));

      assertThat(check(args.toArray(String[]::new))).isEqualTo(CheckCommand.EXIT_FAILED);
      assertThat(err())
          .startsWith(
              "kvguard check: --api-key is not accepted: use --api-key-file FILE (a value on the"
                  + " command line shows in ps")
          .doesNotContain("cmdline-secret-value");
    }
  }

  @Test
  void aModelDeploymentWhoseProbeSendsASecretSaysHowToWriteItToAFile() throws IOException {
    Path file =
        GlmModelDeployment.write(
            dir.resolve("md.yaml"),
            "inference",
            """
            probe:
              authSecretRef: {name: sglang-api, key: api.key}
            roles:
              - name: prefill
                selector: {matchLabels: {role: prefill}}
                engine: sglang
                port: http
            """);

    int exit = check("--model-deployment", file.toString(), "--url", "http://127.0.0.1:1");

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err())
        .startsWith(
            "kvguard check: --model-deployment: its probe.authSecretRef names the engine's API key;"
                + " write it to a file with (umask 077; kubectl -n inference get secret sglang-api"
                + " -o jsonpath='{.data.api\\.key}' | base64 -d > api-key) and pass --api-key-file"
                + " api-key");
  }

  @ParameterizedTest(name = "{0} that Kubernetes would refuse gets no kubectl command")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        "probe.authSecretRef.key  | {name: sglang-api, key: \"t'; touch pwned; echo '\"} | inference",
        "probe.authSecretRef.name | {name: \"x; touch pwned\"}                          | inference",
        "metadata.namespace       | {name: sglang-api}                                   | \"a $(touch pwned)\""
      })
  void aSecretRefNoClusterAcceptsIsRefusedRatherThanPrintedIntoAShellCommand(
      String field, String ref, String namespace) throws IOException {
    Path file =
        GlmModelDeployment.write(
            dir.resolve("md.yaml"),
            namespace,
            """
            probe:
              authSecretRef: %s
            roles:
              - name: prefill
                selector: {matchLabels: {role: prefill}}
                engine: sglang
                port: http
            """
                .formatted(ref));

    int exit = check("--model-deployment", file.toString(), "--url", "http://127.0.0.1:1");

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err())
        .startsWith("kvguard check: --model-deployment " + file + ": ")
        .contains(field)
        .doesNotContain("kubectl")
        .doesNotContain("pwned");
  }

  @Test
  void aRefusedKeyOfAModelDeploymentNamesTheSecretItShouldComeFrom() throws IOException {
    String url = url(sglang(), KEY);
    Path file =
        GlmModelDeployment.write(
            dir.resolve("md.yaml"),
            "inference",
            """
            probe:
              authSecretRef: {name: sglang-api}
            roles:
              - name: decode
                selector: {matchLabels: {role: decode}}
                engine: sglang
                port: http
            """);

    int exit =
        check(
            "--model-deployment",
            file.toString(),
            "--url",
            url,
            "--api-key-file",
            keyFile("an-old-rotated-key").toString());

    assertThat(exit).as(out() + err()).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(out())
        .contains(
            "HTTP 401 to the API key from --api-key-file",
            "(the ModelDeployment's probe.authSecretRef: (umask 077; kubectl -n inference get"
                + " secret sglang-api -o jsonpath='{.data.token}' | base64 -d > api-key))");
  }

  /** The sglang answers, /v1/models echoing the key as JSON writes it and with "\/" escapes. */
  private static Map<String, Answer> sglangEchoing(String key) throws IOException {
    Map<String, Answer> answers = new HashMap<>(sglang());
    ObjectNode models = (ObjectNode) JSON.readTree(answers.get("/v1/models").body());
    models.put("echo", key);
    String json = JSON.writeValueAsString(models);
    String slashEscaped = key.replace("\\", "\\\\").replace("/", "\\/").replace("\"", "\\\"");
    String body = json.substring(0, json.length() - 1) + ",\"echo2\":\"" + slashEscaped + "\"}";
    answers.put("/v1/models", Answer.json(body));
    return answers;
  }

  private static List<String> keyForms(String key) {
    String json =
        new String(
            com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance().quoteAsString(key));
    return List.of(
        key, json, json.replace("/", "\\/"), URLEncoder.encode(key, StandardCharsets.UTF_8));
  }

  private static String everyFile(Path record) throws IOException {
    StringBuilder all = new StringBuilder();
    try (Stream<Path> files = Files.list(record)) {
      for (Path file : files.sorted().toList()) {
        all.append(Files.readString(file, StandardCharsets.ISO_8859_1)).append('\n');
      }
    }
    return all.toString();
  }

  @Test
  void aRecordHoldsEveryRequestAndAnswerWithTheKeyRedactedEverywhere() throws IOException {
    String url = url(sglangEchoing(KEY), KEY);
    Path record = dir.resolve("record");

    int exit =
        checkSglang(url, "--api-key-file", keyFile(KEY).toString(), "--record", record.toString());

    assertThat(exit).as(out() + err()).isZero();
    String recorded = everyFile(record);
    assertThat(recorded)
        .contains(
            "Authorization: <redacted>",
            "\"echo\":\"<redacted>\"",
            "\"echo2\":\"<redacted>\"",
            "\"api_key\":\"<redacted>\"",
            "\"admin_api_key\":\"<redacted>\"")
        .doesNotContain("sk-kvguard-test-secret");
    for (String form : keyForms(KEY)) {
      assertThat(recorded).as("the record holds the key as %s", form).doesNotContain(form);
    }
    assertThat(record.resolve("SOURCE.md")).content().contains("`verdict.json`");
    assertThat(record.resolve("verdict.json")).content().contains("\"exitCode\" : 0");
  }

  @Test
  void aRecordReadBackAsAFixtureGivesTheSameVerdict() throws IOException {
    String url = url(sglang(), null);
    Path record = dir.resolve("record");
    assertThat(checkSglang(url, "--output", "json", "--record", record.toString())).isZero();
    String verdict = JSON.readTree(out()).get("reason").asText();

    Map<String, Answer> replayed = EngineFixtures.record(record);

    assertThat(everyFile(record))
        .as("SGLang's own keys in /server_info, with no --api-key-file given")
        .contains("\"api_key\":\"<redacted>\"")
        .doesNotContain("sk-kvguard-test-secret");
    assertThat(replayed).containsKeys("/server_info", "/v1/models");
    assertThat(checkSglang(url(replayed, null), "--output", "json")).isZero();
    assertThat(JSON.readTree(out()).get("reason").asText()).isEqualTo(verdict);
  }

  @Test
  void aRecordIsNeverWrittenIntoADirectoryThatHoldsAnything() throws IOException {
    String url = url(sglang(), null);
    Path record = Files.createDirectories(dir.resolve("record"));
    Files.writeString(record.resolve("SOURCE.md"), "an earlier record");

    int exit = checkSglang(url, "--record", record.toString());

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err()).startsWith("kvguard check: --record " + record + " is not empty");
    assertThat(record.resolve("SOURCE.md")).hasContent("an earlier record");
    assertThat(engines.get(0).totalHits()).as("nothing was asked of the engine").isZero();

    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertThat(checkSglang(url, "--record", empty.toString())).isZero();
    assertThat(empty.resolve("verdict.json")).exists();
  }

  @Test
  void aRecordDirectoryThatIsASymbolicLinkIsRefusedBeforeTheEngineIsAsked() throws IOException {
    String url = url(sglang(), null);
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    Path link = Files.createSymbolicLink(dir.resolve("record"), elsewhere);
    Path dangling = Files.createSymbolicLink(dir.resolve("dangling"), dir.resolve("nowhere"));

    for (Path named : List.of(link, dangling)) {
      int exit = checkSglang(url, "--record", named.toString());

      assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
      assertThat(err())
          .startsWith("kvguard check: --record " + named + " is a symbolic link")
          .doesNotContain("could not be written");
    }
    assertThat(engines.get(0).totalHits()).as("nothing was asked of the engine").isZero();
    assertThat(elsewhere).isEmptyDirectory();
    assertThat(dir.resolve("nowhere")).doesNotExist();
  }

  @Test
  void aRecordDoesNotOverwriteAFileWrittenWhileTheProbeRan() throws IOException {
    Path record = dir.resolve("record");
    Files.createDirectories(record);
    Files.writeString(record.resolve("verdict.json"), "written meanwhile");

    IOException thrown =
        org.junit.jupiter.api.Assertions.assertThrows(
            IOException.class,
            () ->
                CheckRecord.write(
                    record, List.of(), "sglang", List.of(), "{}", SecretRedaction.none()));

    assertThat(thrown).isInstanceOf(java.nio.file.FileAlreadyExistsException.class);
    assertThat(record.resolve("verdict.json")).hasContent("written meanwhile");
  }

  @Test
  void aKeyTooShortToRedactIsRefusedForARecord() throws IOException {
    int exit =
        checkSglang(
            "http://127.0.0.1:1",
            "--api-key-file",
            keyFile("abc12").toString(),
            "--record",
            dir.resolve("record").toString());

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err())
        .contains("is shorter than 8 characters, too short to redact reliably")
        .doesNotContain("abc12");
    assertThat(dir.resolve("record")).doesNotExist();
  }

  @Test
  void recordsNeedTheStandardProbes() throws IOException {
    int exit =
        new CheckCommand(io.kvguard.probe.EngineProbes.standard(EngineHttp.createDefault()))
            .run(
                new String[] {
                  "--engine",
                  "sglang",
                  "--url",
                  url(sglang(), null),
                  "--context-window",
                  "8",
                  "--record",
                  dir.resolve("r").toString()
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err()).contains("--record needs the standard probes");
  }
}
