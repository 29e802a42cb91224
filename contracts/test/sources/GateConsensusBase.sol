// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "../gate/GateVenueBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {ISomniaAgents} from "../../src/interfaces/ISomniaAgents.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {SomniaVerdictSource} from "../../src/sources/SomniaVerdictSource.sol";
import {SomniaAgentsStandIn} from "../../src/standin/SomniaAgentsStandIn.sol";

/// @notice The venue fixture with a consensus gate in place of the relayed one: a verdict source
/// over the stand-in platform (Somnia's cannot run here), three validators (test addresses),
/// 2 of 3 byte-identical results, answers at most 5 blocks after the read, 2 % slippage over the
/// read's price. Deposit floor 0.01 per validator, LLM price 0.07 per validator: a request costs
/// 3 * 0.01 + 3 * 0.07 = 0.24 (the documented formula).
abstract contract GateConsensusBase is GateVenueBase {
    uint8 internal constant SIZE = 3;
    uint8 internal constant THRESHOLD = 2;
    uint32 internal constant MAX_READ_AGE = 5;
    uint16 internal constant MAX_SLIPPAGE_BPS = 200;
    uint256 internal constant FLOOR_PER_AGENT = 0.01 ether;
    uint256 internal constant PRICE_PER_AGENT = 0.07 ether;
    uint256 internal constant REQUEST_COST = 0.24 ether;
    uint256 internal constant TIMEOUT = 60;
    /// @dev Blocks from one ask about a market to the next.
    uint32 internal constant ASK_INTERVAL = 10;
    uint256 internal constant AGENT_ID = 12847293847561029384;
    uint8 internal constant INVALID_VERDICT = 11;
    uint8 internal constant DISAGREE = 22;
    uint8 internal constant NO_CONSENSUS = 23;
    string internal constant SYSTEM = "You are a trading agent for one binary prediction market.";

    SomniaAgentsStandIn internal platform;
    SomniaVerdictSource internal source;
    address[3] internal validators;

    function setUp() public virtual override {
        super.setUp();
        validators = [makeAddr("validator-a"), makeAddr("validator-b"), makeAddr("validator-c")];
        address[] memory list = new address[](3);
        (list[0], list[1], list[2]) = (validators[0], validators[1], validators[2]);
        platform = new SomniaAgentsStandIn(list, FLOOR_PER_AGENT, PRICE_PER_AGENT);
        (source, gate) = deployConsensus(ISomniaAgents.ConsensusType.Majority);
        token.mint(address(gate), GATE_FUNDS);
        vm.deal(address(source), 10 ether);
        source.noteQuestion(address(market), QUESTION);
    }

    function sourceSettings(address gateAt, ISomniaAgents.ConsensusType kind)
        internal
        view
        returns (SomniaVerdictSource.Settings memory)
    {
        return SomniaVerdictSource.Settings({
            gate: gateAt,
            platform: platform,
            agentId: AGENT_ID,
            pricePerAgent: PRICE_PER_AGENT,
            subcommitteeSize: SIZE,
            threshold: THRESHOLD,
            consensusType: kind,
            timeout: TIMEOUT,
            askInterval: ASK_INTERVAL,
            maxReadAge: MAX_READ_AGE,
            maxSlippageBps: MAX_SLIPPAGE_BPS,
            system: SYSTEM
        });
    }

    /// @dev The consensus mode's gate setting: no signers, no threshold, the source's bounds.
    function consensusSetting() internal pure returns (IRiskGate.Attestors memory a) {
        a.signers = new address[](0);
        a.maxReadAge = MAX_READ_AGE;
        a.maxSlippageBps = MAX_SLIPPAGE_BPS;
    }

    /// @dev The source first, naming the address the gate will be created at (this contract's
    /// next nonce after the source's), then the gate.
    function deployConsensus(ISomniaAgents.ConsensusType kind)
        internal
        returns (SomniaVerdictSource s, RiskGate g)
    {
        address gateAt = vm.computeCreateAddress(address(this), vm.getNonce(address(this)) + 1);
        s = new SomniaVerdictSource(sourceSettings(gateAt, kind));
        g = new RiskGate(
            defaultParams(),
            trustedList(),
            creatorList(),
            address(token),
            address(venue),
            keeperAddr,
            consensusSetting(),
            address(s)
        );
        assertEq(address(g), gateAt, "gate where the source expects it");
    }

    /// @dev An LLM agent's result: the answer, ABI-encoded as a string.
    function encoded(string memory answer) internal pure returns (bytes memory) {
        return abi.encode(answer);
    }

    function respondAs(uint256 i, uint256 requestId, bytes memory result) internal {
        vm.prank(validators[i]);
        platform.respond(requestId, result);
    }
}
