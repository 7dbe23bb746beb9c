import { HttpApi, OpenApi } from "@effect/platform"
import { serviceVersion } from "../src/version.ts"
import { describeErrorBodies } from "./openapiErrors.ts"
import { ApiKeysApi } from "./v1/apiKeys/api.ts"
import { ArtifactsApi } from "./v1/artifacts/api.ts"
import { AuthApi } from "./v1/auth/api.ts"
import { CampaignsApi } from "./v1/campaigns/api.ts"
import { CompliancePolicyApi } from "./v1/compliancePolicy/api.ts"
import { CredentialsApi } from "./v1/credentials/api.ts"
import { DoNotCallApi } from "./v1/doNotCall/api.ts"
import { HealthApi } from "./v1/health/api.ts"
import { KnowledgeBaseApi } from "./v1/knowledgeBase/api.ts"
import { MembersApi } from "./v1/members/api.ts"
import { ModelConfigurationsApi } from "./v1/modelConfigurations/api.ts"
import { PublicAgentApi } from "./v1/publicAgent/api.ts"
import { RecordingsApi } from "./v1/recordings/api.ts"
import { TelephonyConfigsApi } from "./v1/telephonyConfigs/api.ts"
import { TelephonyWebhooksApi } from "./v1/telephonyWebhooks/api.ts"
import { TextChatApi } from "./v1/textChat/api.ts"
import { ToolsApi } from "./v1/tools/api.ts"
import { LocalUploadsApi, UploadsApi } from "./v1/uploads/api.ts"
import { UsageApi } from "./v1/usage/api.ts"
import { VoiceCallsApi } from "./v1/voiceCalls/api.ts"
import { WebhooksApi } from "./v1/webhooks/api.ts"
import { WorkflowsApi } from "./v1/workflows/api.ts"
import { AgentsApi } from "./v2/agents/api.ts"
import { AgentTestsApi } from "./v2/agentTests/api.ts"
import { CallsApi } from "./v2/calls/api.ts"
import { ConversationsApi } from "./v2/conversations/api.ts"
import { V2KnowledgeBaseApi } from "./v2/knowledgeBase/api.ts"
import { QualityApi } from "./v2/quality/api.ts"
import { StatusApi } from "./v2/status/api.ts"
import { V2ToolsApi } from "./v2/tools/api.ts"

/** The whole public interface: v1 (Dograh-compatible paths) and v2 groups in one API. */
export class Api extends HttpApi.make("talkgraph")
  .add(HealthApi)
  .add(AuthApi)
  .add(ApiKeysApi)
  .add(MembersApi)
  .add(UsageApi)
  .add(StatusApi)
  .add(WorkflowsApi)
  .add(ModelConfigurationsApi)
  .add(AgentsApi)
  .add(UploadsApi)
  .add(LocalUploadsApi)
  .add(CampaignsApi)
  .add(TelephonyConfigsApi)
  .add(TextChatApi)
  .add(ConversationsApi)
  .add(QualityApi)
  .add(TelephonyWebhooksApi)
  .add(RecordingsApi)
  .add(VoiceCallsApi)
  .add(ArtifactsApi)
  .add(CallsApi)
  .add(PublicAgentApi)
  .add(WebhooksApi)
  .add(CredentialsApi)
  .add(DoNotCallApi)
  .add(CompliancePolicyApi)
  .add(ToolsApi)
  .add(V2ToolsApi)
  .add(AgentTestsApi)
  .add(KnowledgeBaseApi)
  .add(V2KnowledgeBaseApi)
  .annotate(OpenApi.Title, "talkgraph")
  .annotate(OpenApi.Version, serviceVersion)
  .annotate(OpenApi.Description, "Voice and chat AI agents, their calls, campaigns and usage.")
  .annotate(OpenApi.Transform, describeErrorBodies)
{}
