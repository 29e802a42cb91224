// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateAttestedBase} from "./GateAttestedBase.sol";
import {console} from "../utils/Test.sol";
import {Vm} from "../utils/Vm.sol";
import {paramsHashOf, relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {IAttestorSet} from "../../src/interfaces/IAttestorSet.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice The attested mode. Adversaries: a compromised keeper (it forges, replays, reorders,
/// drops or alters answers, loosens its quote, or submits around the attestors), fewer than k
/// compromised attestors, and a mempool trader who moves the book between the attestors' read
/// and the keeper's transaction. Each attack ends in reason 21 or 22, a revert, or a price no
/// worse than the attested one plus maxSlippageBps: 420_000 * 1.02 = 428_400 on this book.
contract RiskGateAttestedTest is GateAttestedBase {
    // --- deploy: the mode and its settings are fixed, hashed and published

    function test_deploy_modeSettingsArePublishedAndHashed() public {
        IRiskGate.Attestors memory a = attestorsOf(3, K);
        vm.recordLogs();
        RiskGate g = deployGate(defaultParams(), a);
        assertEq(uint256(g.gateMode()), uint256(IRiskGate.GateMode.Attested), "mode");
        bytes32 expected =
            keccak256(abi.encode(defaultParams(), trustedList(), creatorList(), a, address(0)));
        assertEq(g.paramsHash(), expected, "paramsHash covers the attestors");
        assertEq(paramsHashOf(g), expected, "read back");
        IAttestorSet s = IAttestorSet(g.attestorSet());
        assertEq(s.gate(), address(g), "set's gate");
        assertEq(keccak256(abi.encode(s.attestors())), keccak256(abi.encode(a)), "settings");
        assertTrue(s.isAttestor(signers[1]), "member");
        assertFalse(s.isAttestor(keeperAddr), "keeper is no member");
        assertFalse(s.isAttestor(address(0)), "zero is no member");
        assertEq(s.domainSeparator(), domainOf(address(g), block.chainid), "EIP-712 domain");
        // GateDeployed carries the setting as its last field.
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bool found;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics[0] != IRiskGate.GateDeployed.selector) continue;
            (,,,,,, IRiskGate.Attestors memory logged, address source) = abi.decode(
                logs[i].data,
                (
                    IRiskGate.Params,
                    address[],
                    address[],
                    address,
                    address,
                    address,
                    IRiskGate.Attestors,
                    address
                )
            );
            assertEq(source, address(0), "no verdict source");
            assertEq(keccak256(abi.encode(logged)), keccak256(abi.encode(a)), "logged setting");
            found = true;
        }
        assertTrue(found, "GateDeployed");
    }

    function test_deploy_relayedGateHasNoSet() public {
        RiskGate g = deployGate(defaultParams(), relayed());
        assertEq(uint256(g.gateMode()), uint256(IRiskGate.GateMode.Relayed));
        assertEq(g.attestorSet(), address(0));
        // paramsHash covers the empty setting: no signer, every setting 0.
        IRiskGate.Attestors memory none = IRiskGate.Attestors(new address[](0), 0, 0, 0);
        assertEq(
            g.paramsHash(),
            keccak256(abi.encode(defaultParams(), trustedList(), creatorList(), none, address(0))),
            "paramsHash"
        );
    }

    function test_deploy_refusesBadSettingsNamingTheValues() public {
        IRiskGate.Attestors memory a = attestorsOf(3, K);

        a.threshold = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ThresholdOutOfRange.selector, 0, 3));
        deployGate(defaultParams(), a);
        a.threshold = 4; // k > n
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ThresholdOutOfRange.selector, 4, 3));
        deployGate(defaultParams(), a);
        a.threshold = K;

        a.maxReadAge = 0;
        vm.expectRevert(IRiskGate.MaxReadAgeZero.selector);
        deployGate(defaultParams(), a);
        a.maxReadAge = MAX_READ_AGE;

        a.maxSlippageBps = 10_001; // above 100 %
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.MaxSlippageBpsOutOfRange.selector, 10_001, 10_000)
        );
        deployGate(defaultParams(), a);
        a.maxSlippageBps = MAX_SLIPPAGE_BPS;

        (a.signers[0], a.signers[1]) = (a.signers[1], a.signers[0]);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.AttestorsNotAscending.selector, 1, a.signers[0], a.signers[1]
            )
        );
        deployGate(defaultParams(), a);
        (a.signers[0], a.signers[1]) = (a.signers[1], a.signers[0]);

        a.signers[1] = a.signers[0]; // a duplicate is not strictly ascending
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.AttestorsNotAscending.selector, 1, a.signers[0], a.signers[0]
            )
        );
        deployGate(defaultParams(), a);
        a.signers[1] = signers[1];

        a.signers[0] = address(0);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.AttestorZero.selector, 0));
        deployGate(defaultParams(), a);
        a.signers[0] = signers[0];

        // The keeper may not hold a signature: it would need only k - 1 accomplices.
        address[] memory withKeeper = new address[](1);
        withKeeper[0] = keeperAddr;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.KeeperIsAttestor.selector, keeperAddr));
        deployGate(
            defaultParams(), IRiskGate.Attestors(withKeeper, 1, MAX_READ_AGE, MAX_SLIPPAGE_BPS)
        );

        // Nine attestors: one more than the gate holds.
        address[] memory nine = new address[](9);
        for (uint256 i; i < 9; ++i) {
            nine[i] = address(uint160(0x1000 + i));
        }
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TooManyAttestors.selector, 9, 8));
        deployGate(defaultParams(), IRiskGate.Attestors(nine, 1, MAX_READ_AGE, MAX_SLIPPAGE_BPS));

        // A relayed gate takes no settings: a forgotten signer list must not deploy silently.
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.RelayedGateSettings.selector, 2, 5, 200));
        deployGate(defaultParams(), IRiskGate.Attestors(new address[](0), 2, 5, 200));
    }

    function test_setKeeper_refusesAnAttestor() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.KeeperIsAttestor.selector, signers[2]));
        gate.setKeeper(signers[2]);
    }

    // --- each mode refuses the other's submission

    function test_attestedGate_refusesSubmitVerdict() public {
        // A compromised keeper cannot go around the attestors.
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Attested)
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
    }

    function test_relayedGate_refusesSubmitAttested() public {
        RiskGate g = deployGate(defaultParams(), relayed());
        IRiskGate.Quote memory q;
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Relayed)
        );
        g.submitAttested(address(market), readBlockNow(), strs("ABSTAIN"), new bytes[](1), q);
    }

    function test_submitAttested_keeperOnly() public {
        IRiskGate.Quote memory q;
        address stranger = makeAddr("stranger");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.NotKeeper.selector, stranger, keeperAddr));
        gate.submitAttested(address(market), readBlockNow(), strs("ABSTAIN"), new bytes[](1), q);
    }

    // --- k of n

    function test_twoOfThree_buyUp_passesAtTheBook() public {
        // Attestors 0 and 2 say BUY_UP. The keeper's quote ceil(420_000 * 1.005) = 422_100 is
        // under the attested limit 420_000 + 420_000 * 200 / 10_000 = 428_400, so it stands; the
        // gate buys maxSize 1_000 at the 0.42 ask: 420 spent.
        assertEq(attest(market, idx(0, 2), strs("BUY_UP", "BUY_UP")), 0);
        IRiskGate.Position memory p = gate.positionOf(address(market));
        assertEq(p.upUnits, 1_000, "bought");
        assertEq(p.notional, 420, "spent");
    }

    function test_twoOfThree_abstain() public {
        assertEq(attest(market, idx(0, 1), strs("ABSTAIN", "ABSTAIN")), 1);
    }

    function test_threeAnswers_twoAgree_oneDissents_majorityWins() public {
        // 2 BUY_DOWN, 1 ABSTAIN: BUY_DOWN reached k = 2. BUY_DOWN pays 1e6 - 400_000 = 600_000.
        assertEq(attest(market, idx(0, 1, 2), strs("BUY_DOWN", "ABSTAIN", "BUY_DOWN")), 0, "reason");
        assertEq(gate.positionOf(address(market)).downUnits, 1_000);
    }

    function test_decisionPublishesTheVote() public {
        vm.recordLogs();
        attest(market, idx(0, 1, 2), strs("BUY_UP", "nonsense the model said", "BUY_UP"));
        (uint256 found, bytes32 promptHash, bytes memory vote) = recordedDecision();
        assertEq(found, 1, "one Decision");
        assertEq(promptHash, keccak256("prompt"), "the attested prompt hash");
        // Counts: ABSTAIN 0, BUY_UP 2, BUY_DOWN 0, unparseable 1; then per answer signer (20),
        // length (4), hash (32), head: 4 + (56 + 6) + (56 + 23) + (56 + 6) = 207 bytes.
        bytes memory expected = bytes.concat(
            hex"00020001",
            abi.encodePacked(signers[0], uint32(6), keccak256("BUY_UP"), "BUY_UP"),
            abi.encodePacked(
                signers[1],
                uint32(23),
                keccak256("nonsense the model said"),
                "nonsense the model said"
            ),
            abi.encodePacked(signers[2], uint32(6), keccak256("BUY_UP"), "BUY_UP")
        );
        assertEq(vote.length, 207, "vote length");
        assertEq(vote, expected, "vote");
    }

    function test_voteHeadIsCutAt64Bytes() public {
        // A 100-byte answer: its vote entry holds the length 100 and the first 64 bytes only.
        string memory long = string(bytes.concat(bytes("BUY_UP"), new bytes(94)));
        vm.recordLogs();
        attest(market, idx(0, 1), strs(long, "ABSTAIN"));
        (uint256 found,, bytes memory vote) = recordedDecision();
        assertEq(found, 1, "one Decision");
        bytes memory head = new bytes(64);
        for (uint256 i; i < 64; ++i) {
            head[i] = bytes(long)[i];
        }
        // ABSTAIN 1, unparseable 1 (the long answer does not parse).
        assertEq(
            vote,
            bytes.concat(
                hex"01000001",
                abi.encodePacked(signers[0], uint32(100), keccak256(bytes(long)), head),
                abi.encodePacked(signers[1], uint32(7), keccak256("ABSTAIN"), "ABSTAIN")
            )
        );
    }

    // --- reason 21: not attested

    function test_forgedAnswer_keeperSigns_notAttested() public {
        // The keeper signs "BUY_UP" with its own key in place of attestor 1's.
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = signAnswer(keys[0], market, rb, read, "BUY_UP", q.deadline);
        sigs[1] = signAnswer(keeperKey, market, rb, read, "BUY_UP", q.deadline);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21
        );
        assertEq(gate.positionOf(address(market)).upUnits, 0, "nothing bought");
    }

    function test_alteredAnswer_notAttested() public {
        // Attestor 1 said ABSTAIN; the keeper sends its signature with "BUY_UP".
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_UP", 1, "ABSTAIN", q.deadline);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21
        );
    }

    function test_alteredBookOrDeadline_notAttested() public {
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_UP", 1, "BUY_UP", q.deadline);
        // A higher attested ask would loosen the price limit.
        IRiskGate.AttestedRead memory richer =
            IRiskGate.AttestedRead(read.promptHash, read.bestBid, 900_000);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, richer)), 21
        );
        // A later deadline would keep a stale answer alive.
        IRiskGate.Quote memory later = IRiskGate.Quote(q.maxPricePaid, q.deadline + 3600);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, later, read)), 21
        );
        // Another prompt than the one rendered.
        IRiskGate.AttestedRead memory other =
            IRiskGate.AttestedRead(keccak256("other"), read.bestBid, read.bestAsk);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, other)), 21
        );
        // The honest read still counts afterwards: refusals above were not attested, so they
        // did not use the read block.
        assertEq(sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 0);
    }

    function test_signaturesForAnotherMarket_notAttested() public {
        BinaryMarket other = newMarket();
        makerQuote(other, false, 420_000, 2_000);
        makerQuote(other, true, 400_000, 2_000);
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_UP", 1, "BUY_UP", q.deadline);
        assertEq(sendAsKeeper(attestedCall(other, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21);
    }

    function test_signaturesForAnotherChainOrGate_notAttested() public {
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = new bytes[](2);
        RiskGate twin = deployGate(defaultParams(), attestorsOf(3, K));
        for (uint256 i; i < 2; ++i) {
            // Chain 1's domain, and a twin gate's domain on this chain.
            bytes32 d = answerDigest(
                i == 0 ? domainOf(address(gate), 1) : domainOf(address(twin), block.chainid),
                address(market),
                rb,
                read,
                "BUY_UP",
                q.deadline
            );
            (uint8 v, bytes32 r, bytes32 s) = vm.sign(keys[i], d);
            sigs[i] = abi.encodePacked(r, s, v);
        }
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21
        );
    }

    function test_forkToAnotherChainId_oldSignaturesStopCounting() public {
        // Signed on this chain, submitted after a fork that changed the chain id.
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_UP", 1, "BUY_UP", q.deadline);
        vm.chainId(block.chainid + 1);
        assertEq(set().domainSeparator(), domainOf(address(gate), block.chainid), "re-derived");
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21
        );
    }

    function test_signersNotAscending_orRepeated_notAttested() public {
        // The same two valid signatures in descending order.
        assertEq(attest(market, idx(1, 0), strs("BUY_UP", "BUY_UP")), 21, "descending");
        // One attestor's signature twice would otherwise make k alone.
        assertEq(attest(market, idx(0, 0), strs("BUY_UP", "BUY_UP")), 21, "repeated");
    }

    function test_fewerThanK_notAttested() public {
        // One honest signature, k = 2: one compromised attestor alone cannot decide.
        assertEq(attest(market, _one(2), strs("BUY_UP")), 21);
        // No answer at all.
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        assertEq(
            sendAsKeeper(
                attestedCall(
                    market, readBlockNow(), new string[](0), new bytes[](0), q, readOf(market, "p")
                )
            ),
            21
        );
    }

    function test_malleableOrMalformedSignature_notAttested() public {
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = signAnswer(keys[0], market, rb, read, "BUY_UP", q.deadline);
        bytes32 d = answerDigest(
            domainOf(address(gate), block.chainid), address(market), rb, read, "BUY_UP", q.deadline
        );
        sigs[1] = _highS(d, keys[1]);
        assertEq(_recover(d, sigs[1]), signers[1], "the twin recovers under plain ecrecover");
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21
        );
        // 64 bytes (a compact signature) is not the 65 the gate reads.
        sigs[1] = _compact(d, keys[1]);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 21
        );
    }

    function test_staleRead_notAttested() public {
        // Signed at block B, submitted at B + maxReadAge + 1 = B + 6: too old. At B + 5: counts.
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = IRiskGate.Quote(type(uint256).max, uint64(block.timestamp) + 600);
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "ABSTAIN", 1, "ABSTAIN", q.deadline);
        bytes memory call_ = attestedCall(market, rb, strs("ABSTAIN", "ABSTAIN"), sigs, q, read);
        vm.roll(block.number + MAX_READ_AGE + 1);
        assertEq(sendAsKeeper(call_), 21, "6 blocks old");
        vm.roll(block.number - 1);
        assertEq(sendAsKeeper(call_), 1, "5 blocks old");
    }

    function test_replayedSignatureSet_notAttested() public {
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = IRiskGate.Quote(type(uint256).max, uint64(block.timestamp) + 600);
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_UP", 1, "BUY_UP", q.deadline);
        bytes memory call_ = attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read);
        assertEq(sendAsKeeper(call_), 0, "first use");
        // Replayed in the same block and a block later: the read block is used.
        assertEq(sendAsKeeper(call_), 21, "same block");
        vm.roll(block.number + 1);
        assertEq(sendAsKeeper(call_), 21, "next block");
        assertEq(gate.positionOf(address(market)).upUnits, 1_000, "bought once");
        // An older read of the same market is refused too: reads only move forward.
        assertEq(attestAt(market, rb - 1), 21, "older read");
    }

    function attestAt(BinaryMarket m, uint64 rb) internal returns (uint8) {
        IRiskGate.AttestedRead memory read = readOf(m, "prompt");
        IRiskGate.Quote memory q = IRiskGate.Quote(type(uint256).max, uint64(block.timestamp) + 600);
        bytes[] memory sigs = signPair(m, rb, read, 0, "ABSTAIN", 1, "ABSTAIN", q.deadline);
        return sendAsKeeper(attestedCall(m, rb, strs("ABSTAIN", "ABSTAIN"), sigs, q, read));
    }

    // --- reason 22: no verdict reached k

    function test_split_disagree() public {
        assertEq(attest(market, idx(0, 1), strs("BUY_UP", "BUY_DOWN")), 22);
        assertEq(gate.positionOf(address(market)).upUnits, 0);
    }

    function test_unparseableAnswersNeverMakeAVerdict() public {
        // Two signed unparseable answers reach k = 2, but only verdicts count.
        assertEq(attest(market, idx(0, 1), strs("BUY UP!", "buy_up")), 22);
    }

    function test_twoVerdictsAtK_disagree() public {
        // 2 of 3 with k = 1: two verdicts reach k (2k <= n): no agreement.
        gate = deployGate(defaultParams(), attestorsOf(3, 1));
        token.mint(address(gate), GATE_FUNDS);
        assertEq(attest(market, idx(0, 1), strs("BUY_UP", "BUY_DOWN")), 22);
        // One answer alone with k = 1 decides, on a later read.
        vm.roll(block.number + 1);
        assertEq(attestAt(market, readBlockNow()), 1);
    }

    function test_disagreementUsesTheReadBlock() public {
        // A keeper that got a split vote cannot shop for another vote on the same read.
        assertEq(attest(market, idx(0, 1), strs("BUY_UP", "BUY_DOWN")), 22);
        assertEq(attest(market, idx(0, 2), strs("BUY_UP", "BUY_UP")), 21);
    }

    // --- the price: attested book plus slippage, the keeper may only tighten

    function test_bookMovedAfterTheRead_priceBoundedByTheAttestedAsk() public {
        // A second ask level at 0.44 rests behind 0.42. The attestors read ask 0.42; a mempool
        // trader then takes the whole 0.42 level. The keeper's quote is as loose as it gets.
        makerQuote(market, false, 440_000, 2_000);
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = IRiskGate.Quote(type(uint256).max, uint64(block.timestamp) + 60);
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_UP", 1, "BUY_UP", q.deadline);
        takeAsTrader(market, true, 420_000, 2_000);
        assertEq(market.bestAsk(), 440_000);
        // 440_000 > 428_400: rule 15, nothing bought. A relayed gate with this quote would pay
        // 0.44 (test_relayedLooseQuote_paysTheMovedBook below).
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read)), 15
        );
        assertEq(gate.positionOf(address(market)).upUnits, 0);
        console.log("attested price bound on ask 420000 at 200 bps", uint256(428_400));
    }

    function test_relayedLooseQuote_paysTheMovedBook() public {
        // The contrast: the same moved book on a relayed gate and a loose quote buys at 0.44.
        RiskGate relayedGate = deployGate(defaultParams(), relayed());
        token.mint(address(relayedGate), GATE_FUNDS);
        makerQuote(market, false, 440_000, 2_000);
        takeAsTrader(market, true, 420_000, 2_000);
        vm.prank(keeperAddr);
        uint8 reason = relayedGate.submitVerdict(
            address(market),
            "BUY_UP",
            bytes32(0),
            readBlockNow(),
            IRiskGate.Quote(type(uint256).max, uint64(block.timestamp) + 60)
        );
        assertEq(reason, 0);
        assertEq(relayedGate.positionOf(address(market)).notional, 440, "1_000 at 0.44");
    }

    function test_keeperQuoteOnlyTightens() public {
        // A quote of 0.41 under the 0.42 ask: rule 15 although the attested limit allows 0.4284.
        IRiskGate.Quote memory tight = IRiskGate.Quote(410_000, uint64(block.timestamp) + 60);
        assertEq(attestQuoted(market, idx(0, 1), strs("BUY_UP", "BUY_UP"), tight), 15);
    }

    function test_buyDown_limitFromTheAttestedBid() public {
        // BUY_DOWN pays 1e6 - bid = 600_000; limit 600_000 * 1.02 = 612_000. The bid falls to
        // 0.38 after the read (the 0.40 level is taken): DOWN would cost 620_000 > 612_000.
        makerQuote(market, true, 380_000, 2_000);
        IRiskGate.AttestedRead memory read = readOf(market, "prompt");
        IRiskGate.Quote memory q = IRiskGate.Quote(type(uint256).max, uint64(block.timestamp) + 60);
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(market, rb, read, 0, "BUY_DOWN", 2, "BUY_DOWN", q.deadline);
        takeAsTrader(market, false, 400_000, 2_000);
        assertEq(market.bestBid(), 380_000);
        assertEq(
            sendAsKeeper(attestedCall(market, rb, strs("BUY_DOWN", "BUY_DOWN"), sigs, q, read)), 15
        );
    }

    function test_everyRuleStillApplies_untrustedResolver() public {
        // Attested or not, a market whose resolver is not trusted is refused (rule 12).
        BinaryMarket rogue = newMarket(EXPIRY, makeAddr("rogue-resolver"));
        makerQuote(rogue, false, 420_000, 2_000);
        assertEq(attest(rogue, idx(0, 1), strs("BUY_UP", "BUY_UP")), 12);
    }

    function test_collusion_kAttestorsAndAHostileResolverStopAtMaxDrawdown() public {
        // The worst the attested mode allows: k = 2 attestors colluding with a trusted resolver
        // turned hostile. Each round three fresh markets expire at the headroom with one ask of
        // 1_000 units at 0.90; the two attestors sign BUY_UP; the resolver then resolves DOWN.
        // Limit: min(maxPrice 0.95, the keeper's quote ceil(900_000 * 1.005) = 904_500 on the
        // 0.01 grid = 900_000, the attested 900_000 + 2 % = 918_000) = 0.90, so each buy costs
        // 1_000 * 0.90 = 900 units, all lost. The k-th paying buy's drawdown is 900k (earlier
        // losses plus this cost, from H = 100_000), so it passes iff 900k <= 20_000: k <= 22.
        uint256 before = token.balanceOf(address(gate));
        uint256 passes;
        uint8[] memory reasons = new uint8[](24);
        for (uint256 round; round < 8; ++round) {
            uint64 expiry = uint64(block.timestamp) + MIN_HEADROOM;
            BinaryMarket[3] memory ms;
            for (uint256 i; i < 3; ++i) {
                ms[i] = newMarket(expiry, address(this));
                makerQuote(ms[i], false, 900_000, 1_000);
                uint8 r = attest(ms[i], idx(0, 1), strs("BUY_UP", "BUY_UP"));
                reasons[round * 3 + i] = r;
                if (r == 0) passes += 1;
            }
            vm.warp(expiry);
            vm.roll(block.number + 1);
            for (uint256 i; i < 3; ++i) {
                ms[i].resolve(false);
                if (gate.positionOf(address(ms[i])).upUnits != 0) gate.redeem(address(ms[i]));
            }
        }
        uint256 loss = before - token.balanceOf(address(gate));
        assertEq(passes, 22, "22 buys pay");
        assertEq(uint256(reasons[22]), 14, "then rule 14");
        assertEq(uint256(reasons[23]), 14, "then rule 14");
        assertEq(loss, 22 * 900, "22 * 900 units");
        assertLe(loss, MAX_DRAWDOWN, "loss <= maxDrawdown");
        console.log("k attestors colluding with a hostile trusted resolver (24 attempts)");
        console.log("  loss (base units)", loss);
        console.log("  bound (base units)", MAX_DRAWDOWN);
    }

    // --- the call's shape

    function test_shape_oneSignaturePerAnswer() public {
        IRiskGate.Quote memory q;
        vm.prank(keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.AttestationShape.selector, 2, 1));
        gate.submitAttested(address(market), readBlockNow(), strs("A", "B"), new bytes[](1), q);
    }

    function test_shape_readMustBeAppended() public {
        IRiskGate.Quote memory q;
        vm.prank(keeperAddr);
        // Without the read, the call data ends where the arguments do.
        bytes memory bare = abi.encodeCall(
            gate.submitAttested,
            (address(market), readBlockNow(), strs("ABSTAIN"), new bytes[](1), q)
        );
        (bool ok, bytes memory ret) = address(gate).call(bare);
        assertFalse(ok);
        assertEq(bytes4(ret), IRiskGate.AttestedReadMissing.selector);
    }

    /// @dev The Decisions among the recorded logs: how many, and the last one's promptHash and
    /// vote (the ninth data field, after readBlock, verdict, mask, snapshot, order, head,
    /// length and hash).
    function recordedDecision()
        internal
        returns (uint256 found, bytes32 promptHash, bytes memory vote)
    {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics[0] != IRiskGate.Decision.selector) continue;
            ++found;
            promptHash = logs[i].topics[2];
            (,,,,,,,, vote) = abi.decode(
                logs[i].data,
                (uint64, uint8, uint32, bytes, IRiskGate.Order, bytes, uint256, bytes32, bytes)
            );
        }
    }

    /// @dev The high-s twin of `key`'s signature of `d`: (r, n - s) with v flipped.
    function _highS(bytes32 d, uint256 key) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, d);
        uint256 n = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
        return abi.encodePacked(r, bytes32(n - uint256(s)), v == 27 ? uint8(28) : uint8(27));
    }

    function _compact(bytes32 d, uint256 key) internal pure returns (bytes memory) {
        (, bytes32 r, bytes32 s) = vm.sign(key, d);
        return abi.encodePacked(r, s);
    }

    function _recover(bytes32 d, bytes memory sig) internal pure returns (address) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(sig, 0x20))
            s := mload(add(sig, 0x40))
            v := byte(0, mload(add(sig, 0x60)))
        }
        return ecrecover(d, v, r, s);
    }

    function _one(uint256 a) internal pure returns (uint256[] memory l) {
        l = new uint256[](1);
        l[0] = a;
    }
}
