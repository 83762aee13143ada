package io.kvguard.demo;

import java.util.Arrays;

/**
 * The demo jar's entry point: {@code demo} (the default) replays the incident on an embedded API
 * server; {@code fake-engine} serves a fake engine's answers, the process of the end-to-end suite's
 * engine image.
 */
public final class DemoMain {
  static final String USAGE =
      """
      Usage: java -jar kvguard-demo.jar [COMMAND]
        demo           (the default) replay the GLM-5.3 incident on an in-process API server, no cluster needed
                       [--keep-running] keep it up and print a kubeconfig for kubectl
        fake-engine    serve a fake engine's answers (the end-to-end suite's engine image)
      """;

  private DemoMain() {}

  public static void main(String[] args) throws Exception {
    System.exit(run(args));
  }

  static int run(String[] args) throws Exception {
    String command = args.length == 0 ? "demo" : args[0];
    String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
    return switch (command) {
      case "demo" -> Demo.run(rest, System.out, System.err);
      case "fake-engine" -> FakeEngineMain.run(rest, System.out, System.err);
      case "help", "--help", "-h" -> {
        System.out.print(USAGE);
        yield 0;
      }
      default -> {
        System.err.println("kvguard-demo: unknown command '" + command + "'");
        System.err.print(USAGE);
        yield 2;
      }
    };
  }
}
