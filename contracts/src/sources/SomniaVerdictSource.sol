// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IBinaryMarket} from "../interfaces/IBinaryMarket.sol";
import {IMarketFactory} from "../interfaces/IMarketFactory.sol";
import {IRiskGate} from "../interfaces/IRiskGate.sol";
import {IVerdictSource} from "../interfaces/IVerdictSource.sol";
import {
    ISomniaAgentConsumer,
    ISomniaAgents,
    ISomniaLlmAgent
} from "../interfaces/ISomniaAgents.sol";
import {Attestation} from "../libraries/Attestation.sol";
import {Reason, Reasons, Verdict, Verdicts} from "../libraries/GateTypes.sol";
import {PromptText} from "../libraries/PromptText.sol";
import {VerdictParser} from "../libraries/VerdictParser.sol";

/// @title SomniaVerdictSource
/// @notice A consensus gate's verdict source on Somnia's agent platform. `ask` builds the prompt on
/// chain from the market's question, expiry and book at this block (the keeper's rendering, see
/// `PromptText`), and asks the platform's LLM agent through a subcommittee of validators. The
/// platform's callback, `handleResponse`, is counted here: byte-identical successful results,
/// never the platform's own count. At least `threshold` identical results make the verdict; any
/// other outcome is a refusal the gate publishes. Everything is fixed at deploy: the platform,
/// the agent, the subcommittee, the threshold, the timeout, the system text, the read bounds.
/// @dev Adversaries: a hostile validator result (a 100 KB string, bad ABI) becomes a published
/// row, never a reverted callback; a spoofed callback (another sender) or a replayed request id
/// reverts; a caller who asks about the same market again while its request is open is refused.
/// A stranger spending the agent's budget: `ask` is open to anyone and paid from this source's
/// balance, so it asks only about markets the gate would trade (a trusted creator and a trusted
/// resolver, judged by the gate's own lists) and about each at most once per `askInterval`
/// blocks. What anyone can spend is then at most one request per trusted market per interval,
/// and nothing on a market of their own (docs/somnia.md, "Who can spend the budget").
/// The platform itself (an upgradeable proxy) is trusted to report who answered what.
contract SomniaVerdictSource is IVerdictSource, ISomniaAgentConsumer, ReentrancyGuardTransient {
    /// @notice The answers the agent may give, in this order.
    string internal constant ANSWER_UP = "BUY_UP";
    string internal constant ANSWER_DOWN = "BUY_DOWN";
    string internal constant ANSWER_ABSTAIN = "ABSTAIN";
    /// @notice Most validators one request may have: a vote entry per validator, and the
    /// agreement count is quadratic in it.
    uint256 public constant MAX_SUBCOMMITTEE = 16;
    /// @dev A vote entry's fixed part: validator (20 bytes), length (4), hash (32).
    uint256 private constant ENTRY_BYTES = 56;

    /// @notice Everything fixed at deploy.
    struct Settings {
        address gate; // the only gate this source submits to (its address before it exists)
        ISomniaAgents platform;
        uint256 agentId; // the LLM inference agent
        uint256 pricePerAgent; // the agent's price per validator, on top of the deposit floor
        uint8 subcommitteeSize; // validators asked, 1 to MAX_SUBCOMMITTEE
        uint8 threshold; // identical results needed, more than half the subcommittee
        ISomniaAgents.ConsensusType consensusType;
        uint256 timeout; // passed to the platform as it stands
        uint32 askInterval; // blocks from one ask about a market to the next, at least 1
        uint32 maxReadAge; // blocks an answer may come after its read (the gate's setting)
        uint16 maxSlippageBps; // above the read's best price of the side bought (the gate's)
        string system; // the system text every prompt starts with
    }

    /// @notice One open request: what the prompt was built from.
    struct Open {
        address market;
        uint64 readBlock;
        uint128 bestBid;
        uint128 bestAsk;
        bytes32 promptHash;
    }

    error SubcommitteeOutOfRange(uint8 size, uint256 max);
    /// @notice `threshold` must be more than half the subcommittee, so two different results can
    /// never both reach it, and at most the subcommittee.
    error ThresholdOutOfRange(uint8 threshold, uint8 subcommitteeSize);
    error ZeroSetting(string field);
    error MaxSlippageBpsOutOfRange(uint16 maxSlippageBps);
    /// @notice `ask` about a market the gate's factory did not make.
    error UnknownMarket(address market);
    /// @notice `ask` about a market the gate would refuse on trust (rules 12 and 19): its
    /// creator or its resolver is not in the gate's deploy-fixed lists. Nothing is paid.
    error UntrustedMarket(address market, address creator, address resolver);
    /// @notice `ask` about a market asked about less than `askInterval` blocks ago; the next
    /// ask is possible at block `nextAskBlock`.
    error AskTooSoon(address market, uint256 nextAskBlock);
    /// @notice `ask` about a market whose question was not noted (see `noteQuestion`).
    error QuestionNotNoted(address market);
    /// @notice `noteQuestion`'s text does not hash to the market's `questionHash()`.
    error QuestionMismatch(address market, bytes32 got, bytes32 questionHash);
    /// @notice A request about this market is open; it must be answered or time out first.
    error AskPending(address market, uint256 requestId);
    /// @notice The source holds less than a request costs (what was sent with `ask` included).
    error DepositShort(uint256 balance, uint256 deposit);
    error NotPlatform(address caller);
    /// @notice A callback for a request this source has no open record of: never asked, or
    /// already answered.
    error UnknownRequest(uint256 requestId);

    event QuestionNoted(address indexed market);
    /// @notice A request was sent: the prompt's user part as built on chain, its hash (over the
    /// system text, a separator line and the user part), and the deposit paid.
    event Asked(
        uint256 indexed requestId,
        address indexed market,
        uint64 readBlock,
        bytes32 promptHash,
        uint256 deposit,
        string prompt
    );
    /// @notice A request was answered and the gate published `reason` for it.
    event Answered(
        uint256 indexed requestId,
        address indexed market,
        ISomniaAgents.ResponseStatus status,
        uint8 reason
    );
    /// @notice The gate refused the call outright (paused): nothing was published for the
    /// request, which is closed. `error` is the gate's revert data.
    event GateRefused(uint256 indexed requestId, address indexed market, bytes error);
    event Funded(address indexed from, uint256 amount);

    address public immutable gate;
    ISomniaAgents public immutable platform;
    uint256 public immutable agentId;
    uint256 public immutable pricePerAgent;
    uint8 public immutable subcommitteeSize;
    uint8 public immutable threshold;
    ISomniaAgents.ConsensusType public immutable consensusType;
    uint256 public immutable timeout;
    uint32 public immutable askInterval;
    uint32 public immutable maxReadAge;
    uint16 public immutable maxSlippageBps;

    /// @dev Written once, in the constructor (a string cannot be an immutable).
    string internal _system;
    mapping(address market => string) internal _questions;
    mapping(uint256 requestId => Open) internal _open;
    /// @dev The open request of a market, plus one (0: none).
    mapping(address market => uint256) internal _openOf;
    /// @dev The first block at which `market` may be asked about again (0: never asked).
    mapping(address market => uint256) internal _nextAskAt;

    constructor(Settings memory s) {
        if (s.gate == address(0)) revert ZeroSetting("gate");
        if (address(s.platform) == address(0)) revert ZeroSetting("platform");
        if (s.subcommitteeSize == 0 || s.subcommitteeSize > MAX_SUBCOMMITTEE) {
            revert SubcommitteeOutOfRange(s.subcommitteeSize, MAX_SUBCOMMITTEE);
        }
        if (uint256(s.threshold) * 2 <= s.subcommitteeSize || s.threshold > s.subcommitteeSize) {
            revert ThresholdOutOfRange(s.threshold, s.subcommitteeSize);
        }
        if (s.maxReadAge == 0) revert ZeroSetting("maxReadAge");
        if (s.askInterval == 0) revert ZeroSetting("askInterval");
        if (s.maxSlippageBps > 10_000) revert MaxSlippageBpsOutOfRange(s.maxSlippageBps);
        if (bytes(s.system).length == 0) revert ZeroSetting("system");
        gate = s.gate;
        platform = s.platform;
        agentId = s.agentId;
        pricePerAgent = s.pricePerAgent;
        subcommitteeSize = s.subcommitteeSize;
        threshold = s.threshold;
        consensusType = s.consensusType;
        timeout = s.timeout;
        askInterval = s.askInterval;
        maxReadAge = s.maxReadAge;
        maxSlippageBps = s.maxSlippageBps;
        _system = s.system;
    }

    /// @notice Rebates from the platform and funding from anyone: the balance pays for asks.
    receive() external payable {
        emit Funded(msg.sender, msg.value);
    }

    // --- asking

    /// @notice Records `market`'s question (published whole only in the factory's
    /// `MarketCreated` log, which no contract can read), checked against the market's
    /// `questionHash()`. Anyone may call it; a question is noted once.
    function noteQuestion(address market, string calldata question) external {
        bytes32 want = IBinaryMarket(_known(market)).questionHash();
        bytes32 got = keccak256(bytes(question));
        if (got != want) revert QuestionMismatch(market, got, want);
        // The keeper never renders a question that is not UTF-8; neither does the source.
        PromptText.requireUtf8(bytes(question));
        if (bytes(_questions[market]).length == 0) {
            _questions[market] = question;
            emit QuestionNoted(market);
        }
    }

    /// @notice Builds `market`'s prompt from its book at this block and asks the platform. The
    /// request is paid from this source's balance, which what is sent here joins. Anyone may
    /// call it, about a market the gate trusts (`UntrustedMarket` otherwise); one request per
    /// market is open at a time, and a market is asked about at most once per `askInterval`
    /// blocks (`AskTooSoon`).
    /// @dev The request's record needs the id the platform returns, so it is written after the
    /// call; `ask` and `handleResponse` hold the same transient lock (which slither does not
    /// model), so the platform cannot re-enter either before the record exists.
    // slither-disable-start reentrancy-eth,reentrancy-no-eth,reentrancy-benign
    function ask(address market) external payable nonReentrant returns (uint256 requestId) {
        uint256 open = _openOf[market];
        if (open != 0) revert AskPending(market, open - 1);
        // A block number, not a time (slither follows the mapping to the clock).
        // slither-disable-next-line timestamp
        if (block.number < _nextAskAt[market]) revert AskTooSoon(market, _nextAskAt[market]);
        (string memory prompt, IBinaryMarket.GateQuote memory q) = _render(market);
        _requireTrusted(market);
        bytes32 promptHash = PromptText.hash(_system, prompt);
        uint256 deposit = requestDeposit();
        if (address(this).balance < deposit) revert DepositShort(address(this).balance, deposit);
        string[] memory allowed = new string[](3);
        (allowed[0], allowed[1], allowed[2]) = (ANSWER_UP, ANSWER_DOWN, ANSWER_ABSTAIN);
        bytes memory payload =
            abi.encodeCall(ISomniaLlmAgent.inferString, (prompt, _system, false, allowed));
        requestId = platform.createAdvancedRequest{value: deposit}(
            agentId,
            address(this),
            this.handleResponse.selector,
            payload,
            subcommitteeSize,
            threshold,
            consensusType,
            timeout
        );
        uint64 readBlock = uint64(block.number);
        _open[requestId] = Open({
            market: market,
            readBlock: readBlock,
            bestBid: SafeCast.toUint128(q.bestBid),
            bestAsk: SafeCast.toUint128(q.bestAsk),
            promptHash: promptHash
        });
        _openOf[market] = requestId + 1;
        _nextAskAt[market] = block.number + askInterval;
        emit Asked(requestId, market, readBlock, promptHash, deposit, prompt);
    }

    // slither-disable-end reentrancy-eth,reentrancy-no-eth,reentrancy-benign

    /// @notice What one request costs: the platform's deposit floor for the subcommittee plus
    /// the agent's price per validator (the unspent part comes back as a rebate).
    function requestDeposit() public view returns (uint256) {
        return
            platform.getAdvancedRequestDeposit(subcommitteeSize) + pricePerAgent * subcommitteeSize;
    }

    /// @notice The prompt `ask` would send now: the system text and the user part.
    function render(address market)
        external
        view
        returns (string memory systemText, string memory prompt)
    {
        (prompt,) = _render(market);
        systemText = _system;
    }

    function system() external view returns (string memory) {
        return _system;
    }

    function questionOf(address market) external view returns (string memory) {
        return _questions[market];
    }

    /// @notice The first block at which `market` may be asked about again (0: never asked).
    function nextAskAt(address market) external view returns (uint256) {
        return _nextAskAt[market];
    }

    /// @notice The open request about `market`, and whether there is one.
    function openRequestOf(address market) external view returns (bool, uint256) {
        uint256 open = _openOf[market];
        // A request id plus one, not a time (slither follows the platform's ids to its clock).
        // slither-disable-next-line timestamp
        return open != 0 ? (true, open - 1) : (false, 0);
    }

    function openRequest(uint256 requestId) external view returns (Open memory) {
        return _open[requestId];
    }

    // --- answering

    /// @inheritdoc ISomniaAgentConsumer
    /// @dev Reverts only for the wrong sender or an unknown or answered request id; every
    /// result, however hostile, ends in a published row (or, when the gate is paused, in a
    /// `GateRefused` event). The gate's call gets all but 1/64 of the gas left, which keeps
    /// enough for the events after it.
    function handleResponse(
        uint256 requestId,
        ISomniaAgents.Response[] calldata responses,
        ISomniaAgents.ResponseStatus status,
        ISomniaAgents.Request calldata
    ) external nonReentrant {
        if (msg.sender != address(platform)) {
            revert NotPlatform(msg.sender);
        }
        Open memory o = _open[requestId];
        if (o.market == address(0)) revert UnknownRequest(requestId);
        delete _open[requestId];
        delete _openOf[o.market];
        IRiskGate.Judgment memory j = judge(o, responses, status);
        try IRiskGate(gate).submitConsensus(o.market, o.readBlock, j) returns (uint8 reason) {
            emit Answered(requestId, o.market, status, reason);
        } catch (bytes memory err) {
            emit GateRefused(requestId, o.market, err);
        }
    }

    /// @notice What the gate is told about a request's responses, as the current block sees it:
    /// reason 23 unless the platform reports success and the answer comes within `maxReadAge`
    /// blocks of the read; 22 unless `threshold` successful results are byte-identical (the
    /// first `subcommitteeSize` responses are read, whatever the platform counted); 11 when
    /// the agreed result is not an ABI string holding a verdict; otherwise 0 with the verdict
    /// and the price limit. The shown answer is the agreed one, else the first successful one.
    function judge(
        Open memory o,
        ISomniaAgents.Response[] calldata responses,
        ISomniaAgents.ResponseStatus status
    ) public view returns (IRiskGate.Judgment memory j) {
        j.promptHash = o.promptHash;
        uint256 n = responses.length < subcommitteeSize ? responses.length : subcommitteeSize;
        (uint256 agreed, uint256 shown) = _agreement(responses, n);
        j.vote = _vote(responses, n);
        j.verdict = Verdict.unwrap(Verdicts.INVALID);
        if (shown < n) {
            bytes calldata answer = _answer(responses[shown].result);
            (j.head, j.length, j.hash) =
            (VerdictParser.logged(string(answer)), answer.length, keccak256(answer));
        } else {
            j.hash = keccak256("");
        }
        if (
            status != ISomniaAgents.ResponseStatus.Success
                || block.number - o.readBlock > maxReadAge
        ) {
            j.reason = Reason.unwrap(Reasons.NO_CONSENSUS_IN_TIME);
        } else if (agreed == type(uint256).max) {
            j.reason = Reason.unwrap(Reasons.ATTESTORS_DISAGREE);
        } else {
            (bool ok, Verdict v) = _verdictOf(responses[agreed].result);
            if (!ok) {
                j.reason = Reason.unwrap(Reasons.INVALID_VERDICT);
            } else {
                j.verdict = Verdict.unwrap(v);
                j.limit = Attestation.priceLimit(v, o.bestBid, o.bestAsk, maxSlippageBps);
            }
        }
    }

    // --- internal

    /// @dev `market`, if the gate's factory made it.
    function _known(address market) internal view returns (address) {
        address factory = IRiskGate(gate).marketFactory();
        if (IMarketFactory(factory).creatorOf(market) == address(0)) revert UnknownMarket(market);
        return market;
    }

    /// @dev Refuses `market` unless the gate would trust it: its factory creator one of the
    /// gate's trusted creators (rule 19) and its resolver one of its trusted resolvers (rule 12).
    /// `market` is one of the factory's (`_render` checked it first).
    function _requireTrusted(address market) internal view {
        IRiskGate g = IRiskGate(gate);
        address creator = IMarketFactory(g.marketFactory()).creatorOf(market);
        address resolver = IBinaryMarket(market).resolver();
        if (!g.isTrustedCreator(creator) || !g.isTrustedResolver(resolver)) {
            revert UntrustedMarket(market, creator, resolver);
        }
    }

    /// @dev The user part of `market`'s prompt at this block, and the quote it was read from.
    function _render(address market)
        internal
        view
        returns (string memory prompt, IBinaryMarket.GateQuote memory q)
    {
        IBinaryMarket m = IBinaryMarket(_known(market));
        string memory question = _questions[market];
        if (bytes(question).length == 0) revert QuestionNotNoted(market);
        q = m.gateQuote();
        prompt = PromptText.user(
            PromptText.Read({
                market: market,
                question: question,
                quote: q,
                bids: m.getBookLevels(true, PromptText.BOOK_DEPTH),
                asks: m.getBookLevels(false, PromptText.BOOK_DEPTH),
                readBlock: uint64(block.number),
                blockTime: uint64(block.timestamp)
            })
        );
    }

    /// @dev The index of the result `threshold` successful responses gave byte for byte
    /// (`type(uint256).max` when none did), and the index of the answer to show: that one, else
    /// the first successful response (`n` when there is none).
    function _agreement(ISomniaAgents.Response[] calldata responses, uint256 n)
        internal
        view
        returns (uint256 agreed, uint256 shown)
    {
        agreed = type(uint256).max;
        shown = n;
        bytes32[MAX_SUBCOMMITTEE] memory hashes;
        for (uint256 i; i < n; ++i) {
            if (responses[i].status != ISomniaAgents.ResponseStatus.Success) continue;
            if (shown == n) shown = i;
            hashes[i] = keccak256(responses[i].result);
            uint256 same = 1;
            for (uint256 k; k < i; ++k) {
                if (responses[k].status == ISomniaAgents.ResponseStatus.Success) {
                    if (hashes[k] == hashes[i]) ++same;
                }
            }
            // More than half must agree, so the first result to reach the threshold is the only
            // one that can.
            if (same >= threshold && agreed == type(uint256).max) {
                agreed = i;
                shown = i;
            }
        }
    }

    /// @dev The answer a result holds: the string it ABI-encodes, or the result's bytes as they
    /// stand when it is not exactly one well-formed ABI string (then it is not a verdict).
    function _answer(bytes calldata result) internal pure returns (bytes calldata) {
        if (result.length < 64) return result;
        uint256 offset = uint256(bytes32(result[0:32]));
        if (offset != 32) return result;
        uint256 length = uint256(bytes32(result[32:64]));
        if (length > result.length - 64) return result;
        // The standard encoding pads to whole words; anything longer is not one string.
        uint256 padding = (32 - length % 32) % 32;
        if (result.length - 64 != length + padding) return result;
        return result[64:64 + length];
    }

    /// @dev A result's verdict: only a well-formed ABI string that parses counts.
    function _verdictOf(bytes calldata result) internal pure returns (bool, Verdict) {
        bytes calldata answer = _answer(result);
        if (answer.length == result.length) return (false, Verdicts.INVALID);
        return VerdictParser.tryParse(string(answer));
    }

    /// @dev The vote as an attested gate publishes it: a count per verdict (ABSTAIN, BUY_UP,
    /// BUY_DOWN, unparseable), then per successful response its validator, its answer's length
    /// (uint32) and keccak256, and the answer's first RAW_HEAD_BYTES bytes.
    function _vote(ISomniaAgents.Response[] calldata responses, uint256 n)
        internal
        pure
        returns (bytes memory vote)
    {
        uint256 size = 4;
        for (uint256 i; i < n; ++i) {
            if (responses[i].status != ISomniaAgents.ResponseStatus.Success) continue;
            size += ENTRY_BYTES + _headLength(_answer(responses[i].result).length);
        }
        vote = new bytes(size);
        uint256 at = 4;
        uint8[4] memory counts = [uint8(0), 0, 0, 0];
        for (uint256 i; i < n; ++i) {
            if (responses[i].status != ISomniaAgents.ResponseStatus.Success) continue;
            bytes calldata result = responses[i].result;
            (bool ok, Verdict v) = _verdictOf(result);
            counts[ok ? Verdict.unwrap(v) : Attestation.UNPARSEABLE] += 1;
            at = _entry(vote, at, responses[i].validator, _answer(result));
        }
        for (uint256 c; c < 4; ++c) {
            vote[c] = bytes1(counts[c]);
        }
    }

    function _headLength(uint256 length) internal pure returns (uint256) {
        return length < VerdictParser.MAX_RAW_LENGTH ? length : VerdictParser.MAX_RAW_LENGTH;
    }

    /// @dev Writes one vote entry at byte `at`; returns where the next starts. Each word written
    /// ends inside the entry.
    function _entry(bytes memory vote, uint256 at, address who, bytes calldata answer)
        internal
        pure
        returns (uint256)
    {
        uint256 length = answer.length;
        uint256 headLength = _headLength(length);
        bytes32 answerHash = keccak256(answer);
        // A calldata length is far below 2^32 (the block gas limit bounds it).
        // forge-lint: disable-next-line(unsafe-typecast)
        uint32 shortLength = uint32(length);
        assembly ("memory-safe") {
            let p := add(add(vote, 0x20), at)
            mstore(p, shl(96, who))
            mstore(add(p, 20), shl(224, shortLength))
            mstore(add(p, 24), answerHash)
            calldatacopy(add(p, 56), answer.offset, headLength)
        }
        return at + ENTRY_BYTES + headLength;
    }
}
