import { Clock, Duration, Effect, Fiber, Layer } from "effect"
import {
  type Conclusion,
  ConversationEngine,
  type ConversationPlan,
  type Emit
} from "../../services/ConversationEngine.ts"
import { DoNotCall } from "../../services/DoNotCall.ts"
import { KnowledgeBase } from "../../services/KnowledgeBase.ts"
import { type ChatToolCall, LlmChat } from "../../services/LlmChat.ts"
import { LlmFailed, LlmGenerator } from "../../services/LlmGenerator.ts"
import { ToolRunner } from "../../services/ToolRunner.ts"
import type { ConversationState, ToolCallTaken, TurnOutcome } from "../../src/conversation/conversationState.ts"
import { acceptDisposition, dispositionMessages, dispositionSchema } from "../../src/conversation/disposition.ts"
import { DO_NOT_CALL_TOOL, doNotCallToolDefinition } from "../../src/conversation/doNotCallTool.ts"
import { type Ending, isFailure } from "../../src/conversation/endReason.ts"
import {
  acceptExtracted,
  extractionAt,
  extractionMessages,
  extractionSchema
} from "../../src/conversation/extraction.ts"
import { knowledgeRetrievalAt } from "../../src/conversation/knowledgeRetrieval.ts"
import {
  KNOWLEDGE_PASSAGES,
  KNOWLEDGE_TOOL,
  knowledgeDocumentsAt,
  knowledgeQueryOf,
  knowledgeResultText,
  knowledgeToolDefinition,
  sourceOf
} from "../../src/conversation/knowledgeTool.ts"
import { libraryToolsAt, offeredTool } from "../../src/conversation/libraryTools.ts"
import { connectionAt } from "../../src/conversation/nodeModel.ts"
import {
  type ChatMessage,
  farewellPromptFor,
  messagesFor,
  type PlainMessage,
  systemPromptFor
} from "../../src/conversation/prompt.ts"
import { greetingFor } from "../../src/conversation/runContext.ts"
import { END_CALL_TOOL, type ToolDefinition, toolsAt } from "../../src/conversation/tools.ts"
import { addUsage, noUsage, type ToolCall, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { WorkflowEdge, WorkflowNode } from "../../src/graph/definition.ts"
import { renderTemplate } from "../../src/graph/templateVariables.ts"
import { toolVariables } from "../../src/tools/httpToolRequest.ts"
import { fillerOf } from "../../src/tools/toolDefinition.ts"
import { callChangesSomething, type RunnableTool } from "../../src/tools/toolRun.ts"
import { fallbackWhisper, whisperMessages, whisperOf, whisperSchema } from "../../src/tools/transferWhisper.ts"
import { type AutoRetrieval, makeAutoRetrieval } from "./autoRetrieval.ts"
import { doNotCallCall } from "./doNotCallCall.ts"
import { sendDtmfCall } from "./sendDtmfCall.ts"
import { transferCallTool, type TransferRecord } from "./transferCallTool.ts"

/** Edges one user message may follow before the agent must answer: a guard against tool ping-pong. */
const MAX_TRANSITIONS_PER_TURN = 8

/** Rounds of library tool calls one user message may take before the model must answer without tools. */
const MAX_TOOL_ROUNDS_PER_TURN = 5

/** How long a warm transfer waits for the LLM's summary of the call before it briefs the destination without. */
const WHISPER_TIMEOUT = Duration.seconds(6)

const failureEnding = (error: LlmFailed): Ending =>
  error.reason === "timeout"
    ? { reason: "llm_timeout", error: `The language model did not answer in time (${error.message}).` }
    : { reason: "llm_error", error: "The language model could not be used; the server log has the details." }

export const ConversationEngineLive = Layer.effect(
  ConversationEngine,
  Effect.gen(function*() {
    const chat = yield* LlmChat
    const generator = yield* LlmGenerator
    const runner = yield* ToolRunner
    const knowledge = yield* KnowledgeBase
    const autoRetrieval = makeAutoRetrieval(knowledge)
    const doNotCall = yield* DoNotCall

    /**
     * One `search_knowledge_base` call: the node's documents searched, the passages given to the
     * model with their sources, and the sources (document, page) kept on the transcript's call.
     */
    const searchKnowledge = (plan: ConversationPlan, call: ChatToolCall, documentUuids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const asked = knowledgeQueryOf(call.arguments)
        const base = {
          id: call.id,
          name: call.name,
          tool_uuid: KNOWLEDGE_TOOL,
          arguments: call.arguments,
          truncated: false
        }
        if ("problem" in asked) {
          return { ...base, status: "error", latency_ms: 0, result: asked.problem } satisfies ToolCall
        }
        const found = yield* knowledge.search(plan.knowledge!.organizationId, {
          query: asked.query,
          limit: KNOWLEDGE_PASSAGES,
          document_uuids: documentUuids
        }).pipe(Effect.either)
        const latency = (yield* Clock.currentTimeMillis) - started
        if (found._tag === "Left") {
          return { ...base, status: "error", latency_ms: latency, result: found.left.message } satisfies ToolCall
        }
        return {
          ...base,
          status: "success",
          latency_ms: latency,
          result: knowledgeResultText(found.right),
          sources: found.right.chunks.map(sourceOf)
        } satisfies ToolCall
      }).pipe(Effect.withSpan("ConversationEngine.searchKnowledge"))

    /**
     * The library tools one model reply called, all at once; each result (an error included) is
     * recorded for the transcript and given back to the model. A call that changes something
     * (POST, PUT, PATCH, DELETE) is never cut off half-way: a caller speaking meanwhile does not
     * undo it by aborting its request. In a voice call, when the answers take longer than
     * `toolFillerAfterMs`, the first called tool's filler line is said (and answered as `filler`).
     */
    const callTools = (
      plan: ConversationPlan,
      calls: ReadonlyArray<ChatToolCall>,
      library: ReadonlyMap<string, RunnableTool>,
      extracted: Readonly<Record<string, unknown>>,
      transcript: ReadonlyArray<TranscriptTurn>,
      emit: Emit
    ) =>
      Effect.gen(function*() {
        const transfers: Array<TransferRecord> = []
        // What the model spent on warm transfers' whispers: billed to the run like its other replies.
        const spent = { usage: noUsage }
        const all = Effect.forEach(calls, (call) => {
          const tool = library.get(call.name)!
          const { definition } = tool
          const run = definition.type === "send_dtmf"
            ? sendDtmfCall(plan.callActions, call.arguments)
            : definition.type === "transfer_call"
            ? transferCallTool(
              plan.callActions,
              definition.config,
              call.arguments,
              toolVariables(plan.context, extracted),
              whisperSummary(plan, transcript, toolVariables(plan.context, extracted)).pipe(
                Effect.map(({ text, usage }) => {
                  spent.usage = addUsage(spent.usage, usage)
                  return text
                })
              ),
              runner.resolveTransfer({
                organizationId: plan.tools!.organizationId,
                tool,
                arguments: call.arguments,
                variables: toolVariables(plan.context, extracted)
              })
            ).pipe(
              Effect.tap(({ transfer }) => transfer && Effect.sync(() => transfers.push(transfer))),
              Effect.map(({ outcome }) => outcome)
            )
            : runner.run({
              organizationId: plan.tools!.organizationId,
              tool,
              arguments: call.arguments,
              variables: toolVariables(plan.context, extracted)
            })
          return (callChangesSomething(tool) ? Effect.uninterruptible(run) : run).pipe(
            Effect.map((outcome): ToolCall => ({
              id: call.id,
              name: call.name,
              tool_uuid: tool.uuid,
              arguments: call.arguments,
              status: outcome.status,
              latency_ms: outcome.latency_ms,
              result: outcome.result,
              truncated: outcome.truncated
            }))
          )
        }, { concurrency: "unbounded" })
        const filler = calls.map((call) => fillerOf(library.get(call.name)!.definition)).find((line) => line !== null)
        if (plan.toolFillerAfterMs === undefined || filler === undefined) {
          return { called: yield* all, filler: null, transfers, usage: spent.usage }
        }
        const running = yield* Effect.fork(all)
        const early = yield* Fiber.join(running).pipe(
          Effect.timeout(Duration.millis(plan.toolFillerAfterMs)),
          Effect.option
        )
        if (early._tag === "Some") return { called: early.value, filler: null, transfers, usage: spent.usage }
        yield* emit(filler, { whole: true })
        return { called: yield* Fiber.join(running), filler, transfers, usage: spent.usage }
      })

    const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis).toISOString()))

    const nodeById = (plan: ConversationPlan, id: string): WorkflowNode => {
      const node = plan.graph.nodes.find((candidate) => candidate.id === id)
      // The graph was validated before the run began and states only hold its node ids.
      if (!node) throw new Error(`node ${id} is not in the graph`)
      return node
    }

    /**
     * One streamed model reply at `node` (its own model, if it sets one), bounded as a whole by the
     * run's LLM timeout; its text is emitted as it arrives.
     */
    const modelReply = (
      plan: ConversationPlan,
      node: WorkflowNode,
      messages: Array<ChatMessage>,
      tools: ReadonlyArray<ToolDefinition>,
      emit: Emit
    ) =>
      chat.reply({
        connection: connectionAt(plan.connection, node, plan.fallbackModel),
        messages,
        tools,
        timeoutSeconds: plan.limits.llmTimeoutSeconds
      }, emit)
        .pipe(
          Effect.map((reply) => ({ ...reply, text: reply.text.trim() }))
        )

    /** A structured answer, with `node`'s model when the work is that node's (its extraction). */
    const structured = (
      plan: ConversationPlan,
      node: WorkflowNode | null,
      schemaName: string,
      jsonSchema: Record<string, unknown>,
      messages: Array<PlainMessage>
    ) =>
      generator.generateStructured({
        connection: node ? connectionAt(plan.connection, node, plan.fallbackModel) : plan.connection,
        messages,
        schemaName,
        jsonSchema
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(plan.limits.llmTimeoutSeconds),
          onTimeout: () => new LlmFailed({ reason: "timeout", status: null, message: "extraction timed out" })
        })
      )

    /**
     * What a warm transfer's destination hears: the organization's LLM's summary of the call,
     * within WHISPER_TIMEOUT (the caller is waiting), else who is calling and their last words.
     */
    const whisperSummary = (
      plan: ConversationPlan,
      transcript: ReadonlyArray<TranscriptTurn>,
      variables: Readonly<Record<string, unknown>>
    ) =>
      structured(plan, null, "transfer_whisper", whisperSchema, whisperMessages(transcript)).pipe(
        Effect.timeout(WHISPER_TIMEOUT),
        Effect.map((reply) => ({ summary: whisperOf(reply.value), usage: reply.usage })),
        Effect.orElseSucceed(() => ({ summary: null, usage: noUsage })),
        Effect.map(({ summary, usage }) => ({ text: summary ?? fallbackWhisper(transcript, variables), usage }))
      )

    /**
     * Variables of a node being left. A failed extraction is logged and skipped: losing one
     * variable is better than losing the conversation.
     */
    const extract = (plan: ConversationPlan, node: WorkflowNode, transcript: ReadonlyArray<TranscriptTurn>) => {
      const extraction = extractionAt(node)
      if (!extraction) return Effect.succeed({ values: {}, usage: noUsage })
      return structured(
        plan,
        node,
        "extracted_variables",
        extractionSchema(extraction.variables),
        extractionMessages(extraction.prompt, extraction.variables, transcript)
      ).pipe(
        Effect.map((reply) => ({ values: acceptExtracted(extraction.variables, reply.value), usage: reply.usage })),
        Effect.catchAll((error) =>
          Effect.logWarning("Variable extraction failed").pipe(
            Effect.annotateLogs({ node_id: node.id, reason: error.reason }),
            Effect.as({ values: {}, usage: noUsage })
          )
        )
      )
    }

    /**
     * The goodbye after the model called `end_call` without a word, streamed and spoken like any
     * reply. Its failure only loses the goodbye: the conversation ends either way.
     */
    const farewell = (
      plan: ConversationPlan,
      node: WorkflowNode,
      transcript: ReadonlyArray<TranscriptTurn>,
      emit: Emit
    ) =>
      modelReply(
        plan,
        node,
        messagesFor(farewellPromptFor(systemPromptFor(plan.graph, node, plan.context)), transcript),
        [],
        emit
      ).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning("The goodbye after end_call failed").pipe(
            Effect.annotateLogs({ node_id: node.id, reason: error.reason }),
            Effect.as({ text: "", toolCalls: [], usage: noUsage })
          )
        )
      )

    const open = Effect.fn("ConversationEngine.open")(function*(plan: ConversationPlan, emit: Emit) {
      const start = plan.graph.nodes.find((node) => node.type === "startCall")
      if (!start || start.type !== "startCall") throw new Error("the graph has no start node")
      const state: ConversationState = { node_id: start.id, user_turns: 0, extracted: {} }
      const greeting = greetingFor(start.data, plan.context, plan.recordingTexts)
      if (greeting !== null) {
        yield* emit(greeting)
        return {
          state,
          turns: [{ role: "assistant", text: greeting, node_id: start.id, at: yield* now }],
          toolCalls: [],
          usage: noUsage,
          ending: null
        } satisfies TurnOutcome
      }
      const reply = yield* modelReply(
        plan,
        start,
        messagesFor(systemPromptFor(plan.graph, start, plan.context), []),
        [],
        emit
      )
        .pipe(Effect.either)
      if (reply._tag === "Left") {
        return {
          state,
          turns: [],
          toolCalls: [],
          usage: noUsage,
          ending: failureEnding(reply.left)
        } satisfies TurnOutcome
      }
      const turns: Array<TranscriptTurn> = reply.right.text
        ? [{ role: "assistant", text: reply.right.text, node_id: start.id, at: yield* now }]
        : []
      return { state, turns, toolCalls: [], usage: reply.right.usage, ending: null } satisfies TurnOutcome
    })

    const respond = Effect.fn("ConversationEngine.respond")(function*(
      plan: ConversationPlan,
      state: ConversationState,
      history: ReadonlyArray<TranscriptTurn>,
      userText: string,
      emit: Emit
    ) {
      const turns: Array<TranscriptTurn> = [{ role: "user", text: userText, node_id: state.node_id, at: yield* now }]
      const transcript = () => [...history, ...turns]
      const toolCalls: Array<ToolCallTaken> = []
      let usage = noUsage
      let nodeId = state.node_id
      let extracted = state.extracted
      let ending: Ending | null = null
      const say = (text: string) =>
        Effect.gen(function*() {
          turns.push({ role: "assistant", text, node_id: nodeId, at: yield* now })
        })

      /** Automatic searches of this turn, by the documents searched: a node moved to with the same ones reuses them. */
      const retrieved = new Map<string, AutoRetrieval>()
      /**
       * The passages found for the caller's words in `documents`, recorded on the caller's turn;
       * null when nothing could be searched.
       */
      const passagesFor = (organizationId: number, documents: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          if (userText.trim() === "") return null
          const key = documents.join(" ")
          const known = retrieved.get(key)
          if (known) return known.context
          const found = yield* autoRetrieval(organizationId, userText, documents)
          retrieved.set(key, found)
          const asked = turns[0]!
          turns[0] = { ...asked, retrievals: [...(asked.retrievals ?? []), found.record] }
          return found.context
        })

      let transitions = 0
      let toolRounds = 0
      while (ending === null && transitions <= MAX_TRANSITIONS_PER_TURN) {
        const node = nodeById(plan, nodeId)
        const tools = node.type === "endCall"
          ? { definitions: [], transitions: new Map<string, WorkflowEdge>() }
          : toolsAt(plan.graph, nodeId)
        const nodeDocuments = plan.knowledge ? knowledgeDocumentsAt(plan.graph, node) : []
        const automatic = nodeDocuments.length > 0 && knowledgeRetrievalAt(plan.graph, node) === "auto"
        const passages = automatic ? yield* passagesFor(plan.knowledge!.organizationId, nodeDocuments) : null
        // Once the rounds are spent the model is offered no library tool, so it must answer.
        const documents = toolRounds < MAX_TOOL_ROUNDS_PER_TURN && !automatic ? nodeDocuments : []
        const searchable = documents.length > 0 && !tools.transitions.has(KNOWLEDGE_TOOL)
        const listing = toolRounds < MAX_TOOL_ROUNDS_PER_TURN && plan.doNotCall !== undefined &&
          node.type !== "endCall" && !tools.transitions.has(DO_NOT_CALL_TOOL)
        const taken = new Set([
          ...tools.definitions.map((tool) => tool.name),
          ...(searchable ? [KNOWLEDGE_TOOL] : []),
          ...(listing ? [DO_NOT_CALL_TOOL] : [])
        ])
        const library = toolRounds < MAX_TOOL_ROUNDS_PER_TURN && plan.tools
          ? libraryToolsAt(plan.graph, node, plan.tools.byUuid, taken)
          : new Map<string, RunnableTool>()
        const instructions = systemPromptFor(plan.graph, node, plan.context)
        const reply = yield* modelReply(
          plan,
          node,
          messagesFor(passages === null ? instructions : `${instructions}\n\n${passages}`, transcript()),
          [
            ...tools.definitions,
            ...(searchable ? [knowledgeToolDefinition(documents.length)] : []),
            ...(listing ? [doNotCallToolDefinition] : []),
            ...[...library.values()].map(offeredTool)
          ],
          emit
        ).pipe(Effect.either)
        if (reply._tag === "Left") {
          ending = failureEnding(reply.left)
          break
        }
        usage = addUsage(usage, reply.right.usage)
        const libraryCalls = reply.right.toolCalls.filter((toolCall) => {
          const tool = library.get(toolCall.name)
          return tool !== undefined && tool.definition.type !== "end_call"
        })
        const knowledgeCalls = searchable
          ? reply.right.toolCalls.filter((toolCall) => toolCall.name === KNOWLEDGE_TOOL)
          : []
        const listingCalls = listing
          ? reply.right.toolCalls.filter((toolCall) => toolCall.name === DO_NOT_CALL_TOOL)
          : []
        const answered = libraryCalls.length > 0 || knowledgeCalls.length > 0 || listingCalls.length > 0
        if (answered) {
          toolRounds++
          const [{ called, filler, transfers, usage: toolUsage }, searched, listed] = yield* Effect.all([
            libraryCalls.length > 0
              ? callTools(plan, libraryCalls, library, extracted, transcript(), emit)
              : Effect.succeed({
                called: [],
                filler: null,
                transfers: [] as ReadonlyArray<TransferRecord>,
                usage: noUsage
              }),
            Effect.forEach(knowledgeCalls, (toolCall) => searchKnowledge(plan, toolCall, documents), {
              concurrency: "unbounded"
            }),
            Effect.forEach(listingCalls, (toolCall) => doNotCallCall(doNotCall, plan.doNotCall!, toolCall))
          ], { concurrency: 3 })
          usage = addUsage(usage, toolUsage)
          const text = [reply.right.text, filler ?? ""].filter((part) => part !== "").join(" ")
          turns.push({
            role: "assistant",
            text,
            node_id: nodeId,
            at: yield* now,
            tool_calls: [...called, ...searched, ...listed]
          })
          const transfer = transfers.find((each) => each.outcome === "answered") ?? transfers.at(-1)
          if (transfer !== undefined) {
            // The outcome stays on the run (its gathered context) and is a variable the rest of the conversation can use.
            extracted = {
              ...extracted,
              transfer_outcome: transfer.outcome,
              transfer_destination: transfer.destination,
              transfer_type: transfer.type
            }
            if (transfer.outcome === "answered") {
              ending = { reason: "transferred", error: null }
              break
            }
            if (!transfer.callerStillHere) {
              ending = { reason: "transfer_failed", error: null }
              break
            }
          }
        } else if (reply.right.text) yield* say(reply.right.text)
        if (node.type === "endCall") {
          ending = { reason: "end_node_reached", error: null }
          break
        }
        const call = reply.right.toolCalls.map((toolCall) => toolCall.name).find((name) =>
          name === END_CALL_TOOL || tools.transitions.has(name) || library.get(name)?.definition.type === "end_call"
        )
        if (call === undefined) {
          // The model has the results now and answers with them (or calls again).
          if (answered) continue
          break
        }
        const edge = tools.transitions.get(call)
        toolCalls.push({
          name: call,
          from_node_id: nodeId,
          edge_id: edge?.id ?? null,
          to_node_id: edge?.target ?? null
        })
        if (!edge) {
          ending = { reason: "end_call_tool", error: null }
          if (!reply.right.text) {
            const goodbye = yield* farewell(plan, node, transcript(), emit)
            usage = addUsage(usage, goodbye.usage)
            if (goodbye.text) yield* say(goodbye.text)
          }
          break
        }
        transitions++
        const leaving = yield* extract(plan, node, transcript())
        usage = addUsage(usage, leaving.usage)
        extracted = { ...extracted, ...leaving.values }
        nodeId = edge.target
        const speech = edge.data.transition_speech_type === "audio"
          ? plan.recordingTexts?.get(edge.data.transition_speech_recording_id ?? "") ?? ""
          : renderTemplate(edge.data.transition_speech ?? "", plan.context).trim()
        if (speech) {
          yield* emit(speech)
          yield* say(speech)
        }
        // The model chose to move on without answering: the new node answers the same message.
        if (reply.right.text && nodeById(plan, nodeId).type !== "endCall") break
      }

      const next: ConversationState = { node_id: nodeId, user_turns: state.user_turns + 1, extracted }
      if (ending === null && next.user_turns >= plan.limits.maxTurns) {
        ending = { reason: "max_turns_reached", error: null }
      }
      return { state: next, turns, toolCalls, usage, ending } satisfies TurnOutcome
    })

    const conclude = Effect.fn("ConversationEngine.conclude")(function*(
      plan: ConversationPlan,
      state: ConversationState,
      history: ReadonlyArray<TranscriptTurn>,
      ending: Ending
    ) {
      let usage = noUsage
      let extracted = state.extracted
      // After a model failure the provider is not asked again; what was gathered so far is kept.
      if (!isFailure(ending.reason)) {
        const last = yield* extract(plan, nodeById(plan, state.node_id), history)
        usage = addUsage(usage, last.usage)
        extracted = { ...extracted, ...last.values }
      }
      let answer: unknown = undefined
      if (plan.dispositionCodes.length > 0 && !isFailure(ending.reason)) {
        const reply = yield* structured(
          plan,
          null,
          "call_disposition",
          dispositionSchema(plan.dispositionCodes),
          dispositionMessages(plan.dispositionCodes, ending.reason, history)
        ).pipe(
          Effect.tapError((error) =>
            Effect.logWarning("Disposition failed").pipe(Effect.annotateLogs({ reason: error.reason }))
          ),
          Effect.option
        )
        if (reply._tag === "Some") {
          answer = reply.value.value
          usage = addUsage(usage, reply.value.usage)
        }
      }
      const disposition = acceptDisposition(plan.dispositionCodes, ending.reason, answer)
      return {
        gatheredContext: { ...extracted, ...disposition, ...(ending.error ? { error: ending.error } : {}) },
        disposition: disposition.mapped_call_disposition,
        usage
      } satisfies Conclusion
    })

    return ConversationEngine.of({ open, respond, conclude })
  })
)
