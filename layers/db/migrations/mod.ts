import { identity } from "./0001_identity.ts"
import { workflows } from "./0002_workflows.ts"
import { runs } from "./0003_runs.ts"
import { modelSettings } from "./0004_model_settings.ts"
import { campaigns } from "./0005_campaigns.ts"
import { usageIndexes } from "./0006_usage_indexes.ts"
import { conversations } from "./0007_conversations.ts"
import { campaignEngine } from "./0008_campaign_engine.ts"
import { recordings } from "./0009_recordings.ts"
import { voice } from "./0010_voice.ts"
import { hotRunUpdates } from "./0011_hot_run_updates.ts"
import { storedObjects } from "./0012_stored_objects.ts"
import { identityHardening } from "./0013_identity_hardening.ts"
import { carrierCallProgress } from "./0014_carrier_call_progress.ts"
import { contactImports } from "./0015_contact_imports.ts"
import { tools } from "./0016_tools.ts"
import { callsWebhooks } from "./0017_calls_webhooks.ts"
import { performanceIndexes } from "./0018_performance_indexes.ts"
import { compliance } from "./0019_compliance.ts"
import { knowledgeBase } from "./0020_knowledge_base.ts"
import { agentTests } from "./0021_agent_tests.ts"
import { knowledgeSearchIndexes } from "./0022_knowledge_search_indexes.ts"
import { callerIdPools } from "./0023_caller_id_pools.ts"
import { doNotCallBulk } from "./0024_do_not_call_bulk.ts"
import { qualityReviews } from "./0025_quality_reviews.ts"
import { voicemailWebhook } from "./0026_voicemail_webhook.ts"
import { webhookNodes } from "./0027_webhook_nodes.ts"
import { voiceTestCalls } from "./0028_voice_test_calls.ts"
import { campaignVoicemail } from "./0029_campaign_voicemail.ts"
import { transferWebhook } from "./0030_transfer_webhook.ts"
import { usageRollupMoves } from "./0031_usage_rollup_moves.ts"
import { liveChatsByEnd } from "./0032_live_chats_by_end.ts"

/** Every schema change, in order. Keys are `NNNN_name`; never edit one that has shipped. */
export const migrations = {
  "0001_identity": identity,
  "0002_workflows": workflows,
  "0003_runs": runs,
  "0004_model_settings": modelSettings,
  "0005_campaigns": campaigns,
  "0006_usage_indexes": usageIndexes,
  "0007_conversations": conversations,
  "0008_campaign_engine": campaignEngine,
  "0009_recordings": recordings,
  "0010_voice": voice,
  "0011_hot_run_updates": hotRunUpdates,
  "0012_stored_objects": storedObjects,
  "0013_identity_hardening": identityHardening,
  "0014_carrier_call_progress": carrierCallProgress,
  "0015_contact_imports": contactImports,
  "0016_tools": tools,
  "0017_calls_webhooks": callsWebhooks,
  "0018_performance_indexes": performanceIndexes,
  "0019_compliance": compliance,
  "0020_knowledge_base": knowledgeBase,
  "0021_agent_tests": agentTests,
  "0022_knowledge_search_indexes": knowledgeSearchIndexes,
  "0023_caller_id_pools": callerIdPools,
  "0024_do_not_call_bulk": doNotCallBulk,
  "0025_quality_reviews": qualityReviews,
  "0026_voicemail_webhook": voicemailWebhook,
  "0027_webhook_nodes": webhookNodes,
  "0028_voice_test_calls": voiceTestCalls,
  "0029_campaign_voicemail": campaignVoicemail,
  "0030_transfer_webhook": transferWebhook,
  "0031_usage_rollup_moves": usageRollupMoves,
  "0032_live_chats_by_end": liveChatsByEnd
}
