/** The ModelDeployment custom resource: spec and status classes the CRD is generated from. */
package io.kvguard.customresource;
