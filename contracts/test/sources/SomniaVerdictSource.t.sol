// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateConsensusBase} from "./GateConsensusBase.sol";
import {Vm, console} from "../utils/Test.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {ISomniaAgents} from "../../src/interfaces/ISomniaAgents.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {SomniaVerdictSource} from "../../src/sources/SomniaVerdictSource.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {relayed} from "../utils/Modes.sol";

/// @notice The consensus mode over the stand-in platform. Adversaries: validators that disagree,
/// fail, stall or return hostile results (a 100 KB string, bytes that are not an ABI string);
/// anyone who spoofs the platform's callback or replays a request id; a caller who underpays or
/// asks twice; a keeper who tries to submit around the source. Each ends in a published refusal
/// (11, 22, 23), a revert, or, when the validators agree, a decision no looser than the read's
/// price plus 2 %: 420_000 * 1.02 = 428_400 on this book.
contract SomniaVerdictSourceTest is GateConsensusBase {
    // --- deploy: the mode and its source are fixed, hashed and published

    function test_deploy_consensusModeNamesItsSource() public view {
        assertEq(uint256(gate.gateMode()), uint256(IRiskGate.GateMode.Consensus), "mode");
        assertEq(gate.verdictSource(), address(source), "source");
        assertEq(gate.attestorSet(), address(0), "no attestor set");
        assertEq(
            gate.paramsHash(),
            keccak256(
                abi.encode(
                    defaultParams(),
                    trustedList(),
                    creatorList(),
                    consensusSetting(),
                    address(source)
                )
            ),
            "paramsHash covers the source and its bounds"
        );
        assertEq(source.gate(), address(gate));
        assertEq(source.system(), SYSTEM);
    }

    function test_deploy_refusesAMismatchedSource() public {
        // A source made for another gate address.
        SomniaVerdictSource other = new SomniaVerdictSource(
            sourceSettings(address(0xdead), ISomniaAgents.ConsensusType.Majority)
        );
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.VerdictSourceForAnotherGate.selector, address(other), address(0xdead)
            )
        );
        _gateWith(consensusSetting(), address(other));

        // An address without code.
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.VerdictSourceForAnotherGate.selector, address(0xbeef), address(0)
            )
        );
        _gateWith(consensusSetting(), address(0xbeef));

        // Signers or a threshold next to a source.
        IRiskGate.Attestors memory a = consensusSetting();
        a.threshold = 1;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.SourceWithAttestors.selector, 0, 1));
        _gateWith(a, address(source));

        // Bounds other than the source's: the gate would publish one thing and the source do
        // another.
        address gateAt = vm.computeCreateAddress(address(this), vm.getNonce(address(this)) + 1);
        SomniaVerdictSource s =
            new SomniaVerdictSource(sourceSettings(gateAt, ISomniaAgents.ConsensusType.Majority));
        a = consensusSetting();
        a.maxSlippageBps = 100;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.SourceBoundsMismatch.selector,
                MAX_READ_AGE,
                100,
                MAX_READ_AGE,
                MAX_SLIPPAGE_BPS
            )
        );
        _gateWith(a, address(s));
    }

    function _gateWith(IRiskGate.Attestors memory a, address s) internal returns (RiskGate) {
        return new RiskGate(
            defaultParams(),
            trustedList(),
            creatorList(),
            address(token),
            address(venue),
            keeperAddr,
            a,
            s
        );
    }

    // --- the keeper cannot go around the source

    function test_mode_keeperSubmissionsAreRefused() public {
        IRiskGate.Quote memory q = IRiskGate.Quote(950_000, uint64(block.timestamp + 60));
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Consensus)
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), uint64(block.number), q);

        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Consensus)
        );
        gate.submitAttested(
            address(market), uint64(block.number), new string[](0), new bytes[](0), q
        );

        IRiskGate.Judgment memory j;
        j.verdict = BUY_UP;
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.NotVerdictSource.selector, keeperAddr, address(source))
        );
        gate.submitConsensus(address(market), uint64(block.number), j);
    }

    function test_mode_relayedGateRefusesConsensus() public {
        RiskGate g = deployGate(defaultParams(), relayed());
        IRiskGate.Judgment memory j;
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Relayed)
        );
        g.submitConsensus(address(market), uint64(block.number), j);
    }

    // --- asking: the prompt is built on chain, the deposit is exact

    function test_ask_buildsThePromptOnChainAndPaysTheExactDeposit() public {
        // The keeper's rendering (docs/prompts.md) of the fixture's market at this block: book
        // 0.40 x 2_000 / 0.42 x 2_000, tick 10_000, lot 100, minimum 100, expiry START + 1 day
        // = 1_086_400, time START = 1_000_000, so 86_400 s to expiry.
        string memory expected = string.concat(
            "market: ",
            vm.toString(address(market)),
            "\nquestion: \"Will ETH close above 3,000 USD on 2027-01-01?\"\n",
            "tick_size: 10000\nlot_size: 100\nmin_quantity: 100\nexpiry_unix: 1086400\n",
            "read_block: ",
            vm.toString(block.number),
            "\nblock_time_unix: 1000000\nseconds_to_expiry: 86400\nfinalized: false\n",
            "best_bid: 400000\nbest_ask: 420000\n",
            "bids (UP price, quantity), best first:\n  400000 x 2000\n",
            "asks (UP price, quantity), best first:\n  420000 x 2000\n",
            "Answer BUY_UP, BUY_DOWN or ABSTAIN."
        );
        (string memory sys, string memory user) = source.render(address(market));
        assertEq(sys, SYSTEM);
        assertEq(user, expected, "user part");
        bytes32 promptHash = keccak256(abi.encodePacked(SYSTEM, "\n---\n", expected));

        uint256 before = address(source).balance;
        vm.expectEmit(address(source));
        emit SomniaVerdictSource.Asked(
            0, address(market), uint64(block.number), promptHash, REQUEST_COST, expected
        );
        uint256 id = source.ask(address(market));
        assertEq(address(source).balance, before - REQUEST_COST, "0.24 paid");
        assertEq(platform.paid(id), REQUEST_COST);
        assertFalse(platform.underpaid(id));
        // The payload is the LLM agent's call with the prompt, the system text and the answers.
        string[] memory allowed = new string[](3);
        (allowed[0], allowed[1], allowed[2]) = ("BUY_UP", "BUY_DOWN", "ABSTAIN");
        assertEq(
            platform.payloadHash(id),
            keccak256(
                abi.encodeWithSignature(
                    "inferString(string,string,bool,string[])", expected, SYSTEM, false, allowed
                )
            ),
            "payload"
        );
        SomniaVerdictSource.Open memory o = source.openRequest(id);
        assertEq(o.market, address(market));
        assertEq(o.promptHash, promptHash);
        assertEq(uint256(o.bestAsk), 420_000);
    }

    function test_ask_refusesAShortBalanceASecondAskAndAnUnnotedQuestion() public {
        vm.deal(address(source), REQUEST_COST - 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                SomniaVerdictSource.DepositShort.selector, REQUEST_COST - 1, REQUEST_COST
            )
        );
        source.ask(address(market));
        // What the caller sends joins the balance: one wei more pays for it.
        uint256 id = source.ask{value: 1}(address(market));
        assertEq(address(source).balance, 0);

        vm.deal(address(source), 1 ether);
        vm.expectRevert(
            abi.encodeWithSelector(SomniaVerdictSource.AskPending.selector, address(market), id)
        );
        source.ask(address(market));

        BinaryMarket fresh = newMarket();
        vm.expectRevert(
            abi.encodeWithSelector(SomniaVerdictSource.QuestionNotNoted.selector, address(fresh))
        );
        source.ask(address(fresh));
        vm.expectRevert(
            abi.encodeWithSelector(SomniaVerdictSource.UnknownMarket.selector, address(0x1234))
        );
        source.ask(address(0x1234));
    }

    // --- the budget: who can make the source pay (issue 52)

    /// @dev Adversary: a stranger with gas and no key of the project's. Before this rule, 41 asks
    /// about the stranger's own markets took 9.84 of the source's 10 (41 x 0.24). Now: a market
    /// whose creator is not trusted is refused whatever resolver it names, and so is a trusted
    /// creator's market with a resolver the gate does not trust; bound: 0 wei spent.
    function test_budget_strangersMarketsCostTheSourceNothing() public {
        address stranger = makeAddr("stranger");
        uint256 before = address(source).balance;
        for (uint256 i; i < 41; ++i) {
            // Half name a resolver the gate trusts, half the stranger itself.
            address resolver = i % 2 == 0 ? address(this) : stranger;
            vm.prank(stranger);
            address m = venue.createMarket(QUESTION, 10_000, 100, marketMinimum(), EXPIRY, resolver);
            vm.startPrank(stranger);
            source.noteQuestion(m, QUESTION);
            vm.expectRevert(
                abi.encodeWithSelector(
                    SomniaVerdictSource.UntrustedMarket.selector, m, stranger, resolver
                )
            );
            source.ask{value: 0}(m);
            vm.stopPrank();
        }
        // A trusted creator's market judged by a resolver outside the gate's list.
        address rogue = makeAddr("rogue-resolver");
        BinaryMarket own = newMarket(EXPIRY, rogue);
        source.noteQuestion(address(own), QUESTION);
        vm.prank(stranger);
        vm.expectRevert(
            abi.encodeWithSelector(
                SomniaVerdictSource.UntrustedMarket.selector, address(own), address(this), rogue
            )
        );
        source.ask(address(own));
        console.log("spent on 42 untrusted asks (wei), bound 0:", before - address(source).balance);
        assertEq(address(source).balance, before, "nothing paid for an untrusted market");
        // The gate's own market is still askable: the budget is whole.
        vm.prank(stranger);
        source.ask(address(market));
        assertEq(address(source).balance, before - REQUEST_COST);
    }

    /// @dev Adversary: a stranger re-asking one trusted market the moment each request is
    /// answered (before: 70 rounds spent 9.80 and chose when the gate bought). Over 70 blocks
    /// with one round a block and an interval of 10 blocks, at most ceil(70 / 10) = 7 requests
    /// are paid: 7 x 0.24 = 1.68 at most, before rebates.
    function test_budget_reAskingOneTrustedMarketIsOnePerInterval() public {
        address stranger = makeAddr("stranger");
        uint256 before = address(source).balance;
        uint256 paid;
        uint256 refused;
        uint256 start = block.number;
        for (uint256 round; round < 70; ++round) {
            vm.prank(stranger);
            try source.ask(address(market)) returns (uint256 id) {
                ++paid;
                respondAs(0, id, encoded("ABSTAIN"));
                respondAs(1, id, encoded("ABSTAIN"));
                assertEq(source.nextAskAt(address(market)), block.number + ASK_INTERVAL);
            } catch (bytes memory err) {
                ++refused;
                assertEq(
                    err,
                    abi.encodeWithSelector(
                        SomniaVerdictSource.AskTooSoon.selector,
                        address(market),
                        source.nextAskAt(address(market))
                    )
                );
            }
            vm.roll(block.number + 1);
        }
        uint256 bound = (block.number - start + ASK_INTERVAL - 1) / ASK_INTERVAL;
        console.log("requests paid in 70 rounds:", paid);
        console.log("bound (requests):", bound);
        console.log("spent (wei):", before - address(source).balance);
        console.log("bound (wei):", bound * REQUEST_COST);
        assertEq(bound, 7, "ceil(70 / 10)");
        assertEq(paid, 7, "one request per interval, no more");
        assertEq(refused, 63);
        assertLe(before - address(source).balance, bound * REQUEST_COST);
    }

    function test_budget_askIntervalMustBeSet() public {
        SomniaVerdictSource.Settings memory s =
            sourceSettings(address(gate), ISomniaAgents.ConsensusType.Majority);
        s.askInterval = 0;
        vm.expectRevert(
            abi.encodeWithSelector(SomniaVerdictSource.ZeroSetting.selector, "askInterval")
        );
        new SomniaVerdictSource(s);
    }

    function test_noteQuestion_mustHashToTheMarketsQuestion() public {
        BinaryMarket fresh = newMarket();
        bytes32 want = keccak256(bytes(QUESTION));
        vm.expectRevert(
            abi.encodeWithSelector(
                SomniaVerdictSource.QuestionMismatch.selector,
                address(fresh),
                keccak256("Will it rain?"),
                want
            )
        );
        source.noteQuestion(address(fresh), "Will it rain?");
        source.noteQuestion(address(fresh), QUESTION);
        assertEq(source.questionOf(address(fresh)), QUESTION);
    }

    function test_noteQuestion_refusesAQuestionThatIsNotUtf8() public {
        // 0xC3 0x28: a two-byte lead followed by no continuation byte, at index 4.
        bytes memory raw = hex"57696c6cc328";
        string memory bad = string(raw);
        BinaryMarket m = BinaryMarket(
            venue.createMarket(bad, 10_000, 100, marketMinimum(), EXPIRY, address(this))
        );
        vm.expectRevert(abi.encodeWithSignature("QuestionNotUtf8(uint256)", 4));
        source.noteQuestion(address(m), bad);
    }

    // --- answers the validators agree on

    function test_agreedBuyUp_tradesNoWorseThanTheReadPlusSlippage() public {
        uint256 id = source.ask(address(market));
        respondAs(0, id, encoded("BUY_UP"));
        // Majority, 2 of 3: the second identical result finalizes the request.
        vm.expectEmit(address(source));
        emit SomniaVerdictSource.Answered(
            id, address(market), ISomniaAgents.ResponseStatus.Success, 0
        );
        respondAs(1, id, encoded("BUY_UP"));
        // limit = 420_000 + 420_000 * 200 / 10_000 = 428_400, on the 10_000 grid 420_000;
        // quantity 1_000 (maxSize on the 100 lot); cost ceil(1_000 * 420_000 / 1e6) = 420.
        IRiskGate.Position memory p = gate.positionOf(address(market));
        assertEq(p.upUnits, 1_000, "bought");
        assertEq(p.notional, 420, "spent");
        (bool open,) = source.openRequestOf(address(market));
        assertFalse(open, "closed");
    }

    function test_agreedAbstain_isPublishedWithTheVote() public {
        uint256 id = source.ask(address(market));
        vm.recordLogs();
        respondAs(2, id, encoded("ABSTAIN"));
        respondAs(0, id, encoded("ABSTAIN"));
        (uint8 reason, uint8 verdict, bytes memory head, bytes memory vote) = _decision();
        assertEq(reason, 1, "model abstained");
        assertEq(verdict, ABSTAIN);
        assertEq(head, bytes("ABSTAIN"));
        // Counts: ABSTAIN 2, BUY_UP 0, BUY_DOWN 0, unparseable 0; then per response validator,
        // length 7, keccak256("ABSTAIN"), "ABSTAIN": 4 + 2 * (56 + 7) = 130 bytes.
        assertEq(vote.length, 130, "vote size");
        assertEq(uint8(vote[0]), 2);
        assertEq(uint8(vote[1]) + uint8(vote[2]) + uint8(vote[3]), 0);
        assertEq(address(bytes20(_slice(vote, 4, 20))), validators[2], "first responder");
        assertEq(gate.openPositions(), 0);
    }

    // --- answers that do not agree, do not come, or are hostile

    function test_disagreement_isReason22_evenWhenBothParseTheSame() public {
        // Threshold type: the platform finalizes on 2 successes, agreeing or not; the source
        // counts byte-identical results itself. "BUY_UP" and " BUY_UP" parse alike but differ.
        _useThresholdPlatform();
        uint256 id = source.ask(address(market));
        vm.recordLogs();
        respondAs(0, id, encoded("BUY_UP"));
        respondAs(1, id, encoded(" BUY_UP"));
        (uint8 reason, uint8 verdict,, bytes memory vote) = _decision();
        assertEq(reason, DISAGREE);
        assertEq(verdict, 255, "no verdict taken");
        assertEq(uint8(vote[1]), 2, "both counted as BUY_UP in the vote");
        assertEq(gate.openPositions(), 0, "nothing bought");
    }

    function test_disagreement_onDirection() public {
        _useThresholdPlatform();
        uint256 id = source.ask(address(market));
        vm.recordLogs();
        respondAs(0, id, encoded("BUY_UP"));
        respondAs(2, id, encoded("BUY_DOWN"));
        (uint8 reason,,, bytes memory vote) = _decision();
        assertEq(reason, DISAGREE);
        assertEq(uint8(vote[1]), 1);
        assertEq(uint8(vote[2]), 1);
    }

    function test_failedValidators_areReason23() public {
        uint256 id = source.ask(address(market));
        vm.recordLogs();
        vm.prank(validators[0]);
        platform.reportFailure(id);
        // 3 - 2 failures = 1 left < 2 needed: the platform gives up with Failed.
        vm.prank(validators[1]);
        platform.reportFailure(id);
        (uint8 reason,,,) = _decision();
        assertEq(reason, NO_CONSENSUS);
    }

    function test_timeout_isReason23_andTheRebateComesBack() public {
        uint256 id = source.ask(address(market));
        respondAs(0, id, encoded("BUY_UP"));
        uint256 before = address(source).balance;
        vm.warp(block.timestamp + TIMEOUT + 1);
        vm.recordLogs();
        platform.expire(id);
        (uint8 reason,,,) = _decision();
        assertEq(reason, NO_CONSENSUS);
        // One validator was paid 0.07 of the 0.24: 0.17 comes back.
        assertEq(address(source).balance, before + 0.17 ether, "rebate");
    }

    function test_rebate_afterAnAgreedAnswer() public {
        uint256 id = source.ask(address(market));
        uint256 before = address(source).balance;
        respondAs(0, id, encoded("ABSTAIN"));
        respondAs(1, id, encoded("ABSTAIN"));
        // Two validators paid 0.07 each: 0.24 - 0.14 = 0.10 back.
        assertEq(address(source).balance, before + 0.1 ether, "rebate");
    }

    function test_lateAnswer_isReason23() public {
        uint256 id = source.ask(address(market));
        // maxReadAge 5: an answer 6 blocks after the read is too late.
        vm.roll(block.number + MAX_READ_AGE + 1);
        vm.recordLogs();
        respondAs(0, id, encoded("BUY_UP"));
        respondAs(1, id, encoded("BUY_UP"));
        (uint8 reason,,,) = _decision();
        assertEq(reason, NO_CONSENSUS);
        assertEq(gate.openPositions(), 0);
    }

    function test_underpaidRequest_isSkippedAndTimesOut() public {
        // Straight to the stand-in with less than 0.24: validators cannot answer it.
        uint256 id = platform.createAdvancedRequest{value: REQUEST_COST - 1}(
            AGENT_ID,
            address(this),
            bytes4(0x12345678),
            "",
            SIZE,
            THRESHOLD,
            ISomniaAgents.ConsensusType.Majority,
            TIMEOUT
        );
        vm.prank(validators[0]);
        vm.expectRevert(abi.encodeWithSelector(bytes4(keccak256("Underpaid(uint256)")), id));
        platform.respond(id, encoded("BUY_UP"));
    }

    function test_hostileResults_becomePublishedRows() public {
        _useThresholdPlatform();
        // A 100 KB answer and bytes that are not an ABI string: the callback still publishes.
        bytes memory big = new bytes(100_000);
        for (uint256 i; i < big.length; ++i) {
            big[i] = "A";
        }
        uint256 id = source.ask(address(market));
        vm.recordLogs();
        respondAs(0, id, encoded(string(big)));
        respondAs(1, id, bytes("BUY_UP"));
        (uint8 reason,, bytes memory head, bytes memory vote) = _decision();
        assertEq(reason, DISAGREE);
        assertEq(head.length, 64, "only the head is logged");
        // The unparseable count holds both.
        assertEq(uint8(vote[3]), 2);
    }

    function test_hostileResults_agreedOnNoVerdictIsReason11() public {
        bytes memory big = new bytes(100_000);
        uint256 id = source.ask(address(market));
        vm.recordLogs();
        respondAs(0, id, encoded(string(big)));
        respondAs(1, id, encoded(string(big)));
        (uint8 reason, uint8 verdict,,) = _decision();
        assertEq(reason, INVALID_VERDICT);
        assertEq(verdict, 255);
    }

    // --- who may call back

    function test_callback_spoofedFromAnotherAddressReverts() public {
        uint256 id = source.ask(address(market));
        ISomniaAgents.Response[] memory rs = _responses("BUY_UP", "BUY_UP", "BUY_UP");
        ISomniaAgents.Request memory details;
        vm.prank(makeAddr("spoofer"));
        vm.expectRevert(
            abi.encodeWithSelector(SomniaVerdictSource.NotPlatform.selector, makeAddr("spoofer"))
        );
        source.handleResponse(id, rs, ISomniaAgents.ResponseStatus.Success, details);
        assertEq(gate.openPositions(), 0);
    }

    function test_callback_replayedRequestIdReverts() public {
        uint256 id = source.ask(address(market));
        respondAs(0, id, encoded("BUY_UP"));
        respondAs(1, id, encoded("BUY_UP"));
        assertEq(gate.openPositions(), 1);
        ISomniaAgents.Response[] memory rs = _responses("BUY_UP", "BUY_UP", "BUY_UP");
        ISomniaAgents.Request memory details;
        vm.prank(address(platform));
        vm.expectRevert(abi.encodeWithSelector(SomniaVerdictSource.UnknownRequest.selector, id));
        source.handleResponse(id, rs, ISomniaAgents.ResponseStatus.Success, details);
        vm.prank(address(platform));
        vm.expectRevert(abi.encodeWithSelector(SomniaVerdictSource.UnknownRequest.selector, id + 7));
        source.handleResponse(id + 7, rs, ISomniaAgents.ResponseStatus.Success, details);
    }

    function test_callback_pausedGateClosesTheRequestWithoutARow() public {
        uint256 id = source.ask(address(market));
        gate.pause();
        respondAs(0, id, encoded("BUY_UP"));
        vm.expectEmit(address(source));
        emit SomniaVerdictSource.GateRefused(
            id, address(market), abi.encodeWithSelector(IRiskGate.GatePaused.selector)
        );
        respondAs(1, id, encoded("BUY_UP"));
        (bool open,) = source.openRequestOf(address(market));
        assertFalse(open);
    }

    // --- gas (receipt-free figures: gas inside the call)

    function test_gas_askAndCallbacks() public {
        source.render(address(market));
        console.log("render (the prompt alone, a view)", vm.lastCallGas().gasTotalUsed);
        uint256 id = source.ask(address(market));
        console.log(
            "ask on the stand-in (build the prompt, pay, record)", vm.lastCallGas().gasTotalUsed
        );
        console.log(
            "handleResponse, 3 responses agreeing ABSTAIN",
            _callbackGas(id, _responses("ABSTAIN", "ABSTAIN", "ABSTAIN"))
        );

        vm.roll(block.number + ASK_INTERVAL);
        id = source.ask(address(market));
        console.log(
            "handleResponse, 3 responses agreeing BUY_UP, PASS",
            _callbackGas(id, _responses("BUY_UP", "BUY_UP", "BUY_UP"))
        );
        assertEq(gate.openPositions(), 1);

        BinaryMarket other = newMarket();
        makerQuote(other, true, 400_000, 2_000);
        makerQuote(other, false, 420_000, 2_000);
        source.noteQuestion(address(other), QUESTION);
        id = source.ask(address(other));
        console.log(
            "handleResponse, 3 responses disagreeing",
            _callbackGas(id, _responses("BUY_UP", "BUY_DOWN", "ABSTAIN"))
        );
    }

    /// @dev The platform's successful callback of request `id` with `rs`: gas used inside the
    /// source's frame (the gate's call included).
    function _callbackGas(uint256 id, ISomniaAgents.Response[] memory rs)
        internal
        returns (uint256)
    {
        ISomniaAgents.Request memory details;
        vm.prank(address(platform));
        source.handleResponse(id, rs, ISomniaAgents.ResponseStatus.Success, details);
        return vm.lastCallGas().gasTotalUsed;
    }

    // --- helpers

    /// @dev A platform of the Threshold type (finalizes on 2 successes, agreeing or not), with a
    /// source and gate over it.
    function _useThresholdPlatform() internal {
        (source, gate) = deployConsensus(ISomniaAgents.ConsensusType.Threshold);
        token.mint(address(gate), GATE_FUNDS);
        vm.deal(address(source), 10 ether);
        source.noteQuestion(address(market), QUESTION);
    }

    function _responses(string memory a, string memory b, string memory c)
        internal
        view
        returns (ISomniaAgents.Response[] memory rs)
    {
        rs = new ISomniaAgents.Response[](3);
        string[3] memory answers = [a, b, c];
        for (uint256 i; i < 3; ++i) {
            rs[i] = ISomniaAgents.Response({
                validator: validators[i],
                result: encoded(answers[i]),
                status: ISomniaAgents.ResponseStatus.Success,
                receipt: 0,
                timestamp: block.timestamp,
                executionCost: PRICE_PER_AGENT
            });
        }
    }

    /// @dev The one Decision the gate logged since `recordLogs`.
    function _decision()
        internal
        returns (uint8 reason, uint8 verdict, bytes memory head, bytes memory vote)
    {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 found;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(gate)) continue;
            if (logs[i].topics[0] != IRiskGate.Decision.selector) continue;
            ++found;
            reason = uint8(uint256(logs[i].topics[3]));
            (, verdict,,,, head,,, vote) = abi.decode(
                logs[i].data,
                (uint64, uint8, uint32, bytes, IRiskGate.Order, bytes, uint256, bytes32, bytes)
            );
        }
        assertEq(found, 1, "one Decision");
    }

    function _slice(bytes memory b, uint256 from, uint256 n) internal pure returns (bytes memory) {
        bytes memory out = new bytes(n);
        for (uint256 i; i < n; ++i) {
            out[i] = b[from + i];
        }
        return out;
    }
}
