package io.kvguard.customresource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** Lets tests outside this package check documents against the generated CRD. */
public final class CrdRulesAccess {
  private static CrdRules rules;

  private CrdRulesAccess() {}

  public static synchronized List<String> violations(String yaml) throws IOException {
    if (rules == null) {
      rules =
          new CrdRules(
              Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml"));
    }
    return rules.violations(yaml);
  }
}
