package io.kvguard;

import io.kvguard.cli.CheckCommand;
import io.kvguard.cli.Demo;
import io.kvguard.cli.FakeEngineMain;
import java.util.Arrays;

/** Dispatches the jar's subcommands; anything else is a usage error (exit 2). */
final class Subcommands {
  static final String USAGE = """
      Usage: java -jar kvguard-operator.jar [COMMAND]
        (no command)   run the operator against the current kubeconfig or in-cluster config
        demo           replay the GLM-5.3 incident on an in-process API server, no cluster needed
                       [--keep-running] keep it up and print a kubeconfig for kubectl
        check          probe one live engine and judge its KV pool (exit 0 verified, 1 refused, 2 failed)
                       see: check --help
        fake-engine    serve a fake engine's answers (the end-to-end suite's engine image)
      """;

  private Subcommands() {}

  static int run(String[] args) throws Exception {
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    return switch (args[0]) {
      case "demo" -> Demo.run(rest, System.out, System.err);
      case "check" -> CheckCommand.standard().run(rest, System.out, System.err);
      case "fake-engine" -> FakeEngineMain.run(rest, System.out, System.err);
      case "help" -> {
        System.out.print(USAGE);
        yield 0;
      }
      default -> {
        System.err.println("kvguard: unknown command '" + args[0] + "'");
        System.err.print(USAGE);
        yield 2;
      }
    };
  }
}
